"""The tests' prepared databases (tests/support/databases.py): the demo clinic a test gets copied in is exactly
what seeding an empty database writes, row for row and down to the next id, and a reset leaves nothing of the
previous test behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text

from doctordesk.store.db import Database
from doctordesk.store.schema import metadata
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Location
from tests.conftest import NOW
from tests.support import databases


async def rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows in key order; a password hash (salted: never the same twice) as whether it checks."""
    db = Database(url)
    found: dict[str, list[tuple[Any, ...]]] = {}
    try:
        async with db.read() as session:
            for table in metadata.sorted_tables:
                result = await session.execute(select(table).order_by(*table.primary_key.columns))
                found[table.name] = []
                for row in result.all():
                    values = list(row)
                    for i, column in enumerate(table.columns):
                        if column.name == "password_hash" and values[i] is not None:
                            values[i] = await databases.PASSWORDS.verify(values[i], seed.DEMO_PASSWORD)
                    found[table.name].append(tuple(values))
    finally:
        await db.dispose()
    return found


async def next_location_id(url: str) -> int:
    db = Database(url)
    try:
        async with db.transaction() as session:
            values = {"name": "Next", "address": "Somewhere 1", "timezone": "Europe/Berlin"}
            result = await session.execute(insert(Location).values(**values).returning(Location.id))
            return int(result.scalar_one())
    finally:
        await db.dispose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_the_prepared_demo_clinic_is_what_seeding_an_empty_database_writes(
    kind: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if kind == "sqlite":
        basetemp = tmp_path_factory.getbasetemp()
        fresh_url = databases.sqlite_url(tmp_path / "fresh", basetemp)
        fresh_demo = await databases.seed_into(fresh_url, NOW)
        fresh = await rows(fresh_url)
        fresh_next = await next_location_id(fresh_url)
        prepared_url, prepared = databases.sqlite_database(tmp_path / "prepared", basetemp, demo_at=NOW)
    else:
        url = databases.postgres_url()
        await databases.truncate_postgres(url)
        fresh_demo = await databases.seed_into(url, NOW)
        fresh = await rows(url)
        fresh_next = await next_location_id(url)
        prepared = await databases.reset_postgres_async(url, demo_at=NOW)
        prepared_url = url
    assert prepared is not None and prepared.url == prepared_url
    assert prepared.demo == fresh_demo
    assert await rows(prepared_url) == fresh
    assert sum(len(r) for r in fresh.values()) > 100 and all(fresh[t] for t in ("users", "appointments"))
    assert await next_location_id(prepared_url) == fresh_next


@pytest.mark.postgres
async def test_a_reset_leaves_nothing_of_the_previous_test_in_any_table_or_sequence() -> None:
    url = databases.postgres_url()
    await databases.reset_postgres_async(url, demo_at=NOW)
    first = await next_location_id(url)
    await databases.truncate_postgres(url)
    assert all(not found for found in (await rows(url)).values())
    assert await next_location_id(url) == 1
    prepared = await databases.reset_postgres_async(url, demo_at=NOW)
    assert prepared is not None
    assert await next_location_id(url) == first


@pytest.mark.postgres
async def test_an_append_only_table_stays_append_only_after_a_reset() -> None:
    url = databases.postgres_url()
    await databases.reset_postgres_async(url, demo_at=NOW)
    db = Database(url)
    try:
        with pytest.raises(Exception, match="append-only"):
            async with db.transaction() as session:
                await session.execute(text("DELETE FROM chat_messages"))
    finally:
        await db.dispose()


async def test_a_demo_test_gets_the_prepared_copy(request: pytest.FixtureRequest, demo: Any, runtime: Any) -> None:
    from tests.conftest import PREPARED

    prepared = request.node.stash[PREPARED]
    assert prepared.url == runtime.settings.database_url and prepared.demo == demo
    assert demo is not prepared.demo  # a copy: a test that changes it changes no other test's


@pytest.mark.postgres
async def test_the_workers_database_commits_without_waiting_for_the_disk_and_the_apps_settings_do_not() -> None:
    """A test's commits return before the WAL reaches the disk (the worker's database setting); the server's
    default, which the app and a clinic's database keep, is unchanged."""
    db = Database(databases.postgres_url())
    try:
        async with db.read() as session:
            assert (await session.execute(text("SHOW synchronous_commit"))).scalar_one() == "off"
            default = text("SELECT boot_val FROM pg_settings WHERE name = 'synchronous_commit'")
            assert (await session.execute(default)).scalar_one() == "on"
    finally:
        await db.dispose()
