"""A screen's reads on PostgreSQL: no transaction around them (no BEGIN, no ROLLBACK: two round trips through the
event loop fewer per render), on the one pool the service's other work shares; every other session keeps its
transaction."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text

from doctordesk.store.tables import User

pytestmark = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


async def _in_transaction(session) -> bool:  # type: ignore[no-untyped-def]
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    return bool(raw.driver_connection.is_in_transaction())


async def test_a_screens_read_runs_outside_a_transaction(runtime):
    async with runtime.db.read(screen=True) as session:
        await session.execute(select(User.id).limit(1))
        assert not await _in_transaction(session)
        # Each statement is a transaction of its own: two statements see two moments.
        first = (await session.execute(text("SELECT now()"))).scalar_one()
        second = (await session.execute(text("SELECT now()"))).scalar_one()
        assert second > first


async def test_other_reads_and_writes_keep_their_transaction(runtime):
    async with runtime.db.read() as session:
        await session.execute(select(User.id).limit(1))
        assert await _in_transaction(session)
    async with runtime.db.transaction() as session:
        await session.execute(select(User.id).limit(1))
        assert await _in_transaction(session)


async def test_a_connection_back_from_a_screens_read_begins_again_for_a_write(runtime):
    """The screens' reads share the pool: a connection they used is back in its transactions afterwards."""
    size = runtime.db.engine.sync_engine.pool.size()
    for _ in range(size + 1):
        async with runtime.db.read(screen=True) as session:
            await session.execute(select(User.id).limit(1))
    assert runtime.db.screen_read_engine.sync_engine.pool is runtime.db.engine.sync_engine.pool
    for _ in range(size + 1):
        async with runtime.db.transaction() as session:
            await session.execute(select(User.id).limit(1))
            assert await _in_transaction(session)
