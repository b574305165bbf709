"""Back-pressure instead of a queue: while every connection of the service's pools is in use past the pool's wait
bound (``DOCTORDESK_DB_POOL_WAIT_MS``; a write: past the lock timeout, test_write_waits_for_a_connection.py), a
screen's PUT, its poll and a decision are answered 503 SERVICE_BUSY with ``Retry-After``, in the error shape, and
write nothing; once a connection is free the same requests succeed. On SQLite (the readers' pool and the writer's)
and PostgreSQL (its one pool)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import pytest
from sqlalchemy import event, func, select

from doctordesk.store.db import create_engine, default_pool_size
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.support.review import REQUESTED, aid

POOL_SIZE = 3
BURST = 12  # more than a few connections at once
POOL_WAIT_MS = 300  # background work (the event relay) may hold a connection for a moment after the held ones return
# A write waits for its turn (SQLite) or a connection (PostgreSQL) up to the lock timeout: here a few pool waits.
LOCK_TIMEOUT_MS = 900


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(
        database_url, db_pool_size=POOL_SIZE, db_pool_wait_ms=POOL_WAIT_MS, db_lock_timeout_ms=LOCK_TIMEOUT_MS
    )


@asynccontextmanager
async def every_connection_held(runtime) -> AsyncIterator[None]:
    """Check out every connection of the service's pools (SQLite: the writer's, the readers' and the screens'
    readers' engine; PostgreSQL: the one pool all three share) and hold them until the block ends."""
    async with AsyncExitStack() as held:
        for engine in runtime.db.pooled_engines:
            for _ in range(POOL_SIZE):
                await held.enter_async_context(engine.connect())
        yield


async def _counts(runtime, appointment_id: int) -> tuple[int, int, int, int]:
    async with runtime.db.read() as s:
        row = await s.get(Appointment, appointment_id)
        history = await s.scalar(
            select(func.count()).select_from(AppointmentHistory).where(AppointmentHistory.appointment_id == row.id)
        )
        audit = await s.scalar(select(func.count()).select_from(AuditLog))
        return row.status, row.version, history, audit


def _busy(response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    body = response.json()
    assert body["kind"] == "error" and body["code"] == "SERVICE_BUSY" and body["status"] == 503
    assert "Nothing was changed" in body["message"]


async def test_every_connection_in_use_is_503_with_retry_after_and_nothing_written(client, login, demo, runtime):
    doctor = await login("doctor1")
    opened = await client.put("/profile/appointments", headers=doctor.headers)
    assert opened.status_code == 200, opened.text
    a = aid(demo, REQUESTED)
    before = await _counts(runtime, a)

    async with every_connection_held(runtime):
        page = await client.put("/profile/appointments", headers=doctor.headers)
        decision = await client.post(
            f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "Away", "version": "1"}
        )
    _busy(page)
    _busy(decision)
    assert await _counts(runtime, a) == before

    again = await client.put("/profile/appointments", headers=doctor.headers)
    assert again.status_code == 200, again.text
    retried = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "Away", "version": "1"}
    )
    assert retried.status_code == 200, retried.text
    assert (await _counts(runtime, a))[1] == before[1] + 1


async def test_the_pool_size_is_the_setting_and_no_connection_opens_past_it(runtime):
    engines = {runtime.db.engine, runtime.db.read_engine, runtime.db.screen_read_engine}
    for engine in engines:
        pool = engine.sync_engine.pool
        assert pool.size() + max(0, pool._max_overflow) == POOL_SIZE  # type: ignore[attr-defined]


async def test_a_connection_opened_for_a_burst_is_kept_after_it(runtime):
    """The pool keeps what a burst opened (no connection opened and closed per checkout past a few kept ones: on
    PostgreSQL that churn was the spread load's tail), and a second burst of the same size opens none."""
    url = runtime.db.read_engine.url.render_as_string(hide_password=False)
    engine = create_engine(url, writer=False, pool_size=BURST)
    opened: list[object] = []
    event.listen(engine.sync_engine, "connect", lambda connection, _record: opened.append(connection))
    try:
        for _ in range(2):
            async with AsyncExitStack() as held:
                for _ in range(BURST):
                    await held.enter_async_context(engine.connect())
            assert engine.sync_engine.pool.checkedin() == BURST  # type: ignore[attr-defined]
        assert len(opened) == BURST
    finally:
        await engine.dispose()


def test_the_default_pool_size_follows_the_cores_on_both_databases():
    assert default_pool_size(cpus=1) == 8
    assert default_pool_size(cpus=2) == 8
    assert default_pool_size(cpus=8) == 32
