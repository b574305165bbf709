"""Migrations from empty on SQLite and PostgreSQL: up to every head, down to base, up again; and the models match
the migrations exactly, so a feature's table change without its migration fails here."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from doctordesk.store.migrate import alembic_config, current_heads, downgrade, upgrade
from doctordesk.store.schema import metadata
from tests.support import databases


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def empty_engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """An engine on an empty database: a new SQLite file, or a new PostgreSQL schema (the shared test database's
    public schema stays untouched)."""
    if request.param == "sqlite":
        from doctordesk.store.db import create_engine

        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
        yield engine
        await engine.dispose()
        return
    url = databases.postgres_url()
    schema = f"migration_{secrets.token_hex(4)}"
    admin = create_async_engine(url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        yield engine
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def _heads() -> set[str]:
    return set(ScriptDirectory.from_config(alembic_config()).get_heads())


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names())) - {"alembic_version"}


async def _drift(engine: AsyncEngine) -> list[Any]:
    def compare(conn: Any) -> list[Any]:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": False, "render_as_batch": True}
        )
        return list(compare_metadata(context, metadata))

    async with engine.connect() as conn:
        return await conn.run_sync(compare)


async def test_migrations_go_up_to_every_head_down_to_base_and_up_again(empty_engine):
    assert await _tables(empty_engine) == set()
    await upgrade(empty_engine)
    assert await current_heads(empty_engine) == _heads()
    assert await _tables(empty_engine) == set(metadata.tables)
    await downgrade(empty_engine)
    assert await _tables(empty_engine) == set()
    assert await current_heads(empty_engine) == set()
    await upgrade(empty_engine)
    assert await _tables(empty_engine) == set(metadata.tables)


async def test_the_models_match_the_migrations(empty_engine):
    await upgrade(empty_engine)
    drift = await _drift(empty_engine)
    assert drift == [], "models and migrations differ; write the migration for: " + repr(drift)


async def test_upgrading_twice_changes_nothing(empty_engine):
    await upgrade(empty_engine)
    await upgrade(empty_engine)
    assert await current_heads(empty_engine) == _heads()


def test_every_feature_migration_branches_from_the_core_with_its_own_revision_id():
    script = ScriptDirectory.from_config(alembic_config())
    revisions = list(script.walk_revisions())
    assert len({r.revision for r in revisions}) == len(revisions)
    bases = [r for r in revisions if r.down_revision is None]
    assert [r.revision for r in bases] == ["0001"]


def test_the_migration_environment_refuses_to_run_without_a_connection():
    from alembic import command

    with pytest.raises(RuntimeError, match="doctordesk migrate"):
        command.upgrade(alembic_config(), "heads")
    assert os.path.isdir(alembic_config().get_main_option("script_location"))
