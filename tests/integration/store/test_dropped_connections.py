"""PostgreSQL without a ping before each transaction: a pooled connection the server dropped (here with
``pg_terminate_backend``) is replaced when it is next taken from the pool, and one dropped in the middle of a unit of
work fails it as "busy, nothing changed" (503), never as an internal error. On a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from doctordesk.domain.errors import ServiceBusy
from doctordesk.store.db import Database
from tests.support.databases import postgres_url

pytestmark = pytest.mark.postgres


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    database = Database(postgres_url())
    yield database
    await database.dispose()


async def _pid(db: Database) -> int:
    return (await _pid_and_driver(db))[0]


async def _pid_and_driver(db: Database) -> tuple[int, Any]:
    """The server process of the pooled connection a read gets, and the driver's connection (asyncpg's)."""
    async with db.read() as session:
        pid = int((await session.execute(text("select pg_backend_pid()"))).scalar_one())
        return pid, (await (await session.connection()).get_raw_connection()).driver_connection


async def _terminate(db: Database, pid: int) -> None:
    dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
    other = await asyncpg.connect(dsn)
    try:
        assert await other.fetchval("select pg_terminate_backend($1)", pid) is True
    finally:
        await other.close()


async def _until_closed(driver: Any) -> None:
    """Until the driver has read the server's close (bounded: the close arrives in well under a second)."""
    for _ in range(500):
        if driver.is_closed():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the driver never saw the server close the connection")


async def test_a_connection_dropped_in_the_pool_is_replaced_without_a_failed_request(db: Database) -> None:
    first, driver = await _pid_and_driver(db)  # back in the pool, idle
    await _terminate(db, first)
    await _until_closed(driver)
    second = await _pid(db)  # no error: the checkout replaced it
    assert second != first
    async with db.transaction() as session:  # writers too
        assert (await session.execute(text("select pg_backend_pid()"))).scalar_one() == second


async def test_a_connection_dropped_during_a_unit_of_work_answers_busy(db: Database) -> None:
    with pytest.raises(ServiceBusy):
        async with db.transaction() as session:
            pid = (await session.execute(text("select pg_backend_pid()"))).scalar_one()
            await _terminate(db, pid)
            await _until_closed((await (await session.connection()).get_raw_connection()).driver_connection)
            await session.execute(text("select 1"))
    assert await _pid(db) != pid  # and the next one works on a new connection
