"""The review_0001 migration matches the tables' declarations and downgrades and upgrades cleanly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from doctordesk.store.db import create_engine
from doctordesk.store.migrate import downgrade, upgrade
from doctordesk.store.schema import metadata

REVIEW_TABLES = {"appointment_offers", "review_drafts"}


def _review_diffs(connection) -> list:
    context = MigrationContext.configure(connection, opts={"compare_type": False})
    diffs = compare_metadata(context, metadata)
    out = []
    for d in diffs:
        items = d if isinstance(d, list) else [d]
        for item in items:
            text = repr(item)
            if any(t in text for t in REVIEW_TABLES):
                out.append(item)
    return out


async def test_the_review_migration_creates_the_declared_tables_and_indexes(database_url):
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(_review_diffs) == []
            indexes = await conn.run_sync(lambda c: {i["name"] for i in inspect(c).get_indexes("appointment_offers")})
        assert "ix_appointment_offers_doctor_start" in indexes
    finally:
        await engine.dispose()


async def test_the_review_migration_downgrades_and_upgrades(database_url):
    engine = create_engine(database_url)
    try:
        await downgrade(engine, "review_0001@-1")
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert not tables & REVIEW_TABLES
        await upgrade(engine)
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert REVIEW_TABLES <= tables
    finally:
        await engine.dispose()
