"""On PostgreSQL a write waits for a connection of the pool up to the lock timeout, as SQLite's writers wait for
their turn, while a read that finds every connection in use is answered busy after the pool's wait bound: in a burst
of sends (a thousand doctors at once) a send is stored a moment later instead of refused and sent again. Past the
lock timeout it is busy too, with nothing written."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import pytest

from tests.support.chat import open_chat, send, stored

POOL_SIZE = 3
POOL_WAIT_MS = 200
LOCK_TIMEOUT_MS = 20_000  # far beyond the test's own waits: the send still waits when a connection frees

pytestmark = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(
        database_url, db_pool_size=POOL_SIZE, db_pool_wait_ms=POOL_WAIT_MS, db_lock_timeout_ms=LOCK_TIMEOUT_MS
    )


async def test_a_send_waits_past_the_pools_bound_for_a_connection_while_a_read_is_answered_busy(
    client, login, demo, runtime
):
    doctor = await login("doctor1")
    appointment = demo.appointments[0]
    page = await open_chat(client, doctor, appointment)  # the sign-in checked and the page kept: no read is left
    before = await stored(runtime)
    async with AsyncExitStack() as held:
        connections = [await held.enter_async_context(runtime.db.engine.connect()) for _ in range(POOL_SIZE)]
        sending = asyncio.create_task(send(client, doctor, appointment, "In a burst", state=page["state"]))
        read = await client.put("/profile/appointments", headers=doctor.headers)
        assert read.status_code == 503 and read.json()["code"] == "SERVICE_BUSY"
        await asyncio.sleep(3 * POOL_WAIT_MS / 1000)  # several of the pool's waits: a read would have been refused
        assert not sending.done()
        await connections[0].close()  # one connection free: the waiting send takes it
        answer = await asyncio.wait_for(sending, LOCK_TIMEOUT_MS / 1000)
    assert answer.status_code == 200, answer.text
    _, messages, _ = await stored(runtime)
    assert messages == before[1] + 1


async def test_a_send_that_finds_no_connection_within_the_lock_timeout_is_busy_and_stores_nothing(
    client, login, demo, runtime
):
    runtime.db.lock_timeout = 3 * POOL_WAIT_MS / 1000
    doctor = await login("doctor1")
    appointment = demo.appointments[0]
    page = await open_chat(client, doctor, appointment)
    before = await stored(runtime)
    async with AsyncExitStack() as held:
        for _ in range(POOL_SIZE):
            await held.enter_async_context(runtime.db.engine.connect())
        answer = await send(client, doctor, appointment, "Too late", state=page["state"])
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json()["code"] == "SERVICE_BUSY"
    assert await stored(runtime) == before
