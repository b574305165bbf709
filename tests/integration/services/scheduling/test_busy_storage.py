"""A write that waits too long for a lock another transaction holds is answered 503 SERVICE_BUSY with
``Retry-After``, in the error shape, and writes nothing; the same request succeeds once the lock is gone."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from doctordesk.domain.appointments.status import Status
from doctordesk.services.accounts.auth import token_hash
from doctordesk.store.db import create_engine
from doctordesk.store.realtime_tables import StreamTicket
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.support.review import REQUESTED, aid

LOCK_TIMEOUT_MS = 300


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, db_lock_timeout_ms=LOCK_TIMEOUT_MS)


async def _counts(runtime, appointment_id: int) -> tuple[int, int, int, int]:
    async with runtime.db.read() as s:
        row = await s.get(Appointment, appointment_id)
        history = await s.scalar(
            select(func.count()).select_from(AppointmentHistory).where(AppointmentHistory.appointment_id == row.id)
        )
        audit = await s.scalar(select(func.count()).select_from(AuditLog))
        return row.status, row.version, history, audit


async def test_a_decision_blocked_by_another_transactions_lock_is_503_and_writes_nothing(
    client, login, demo, runtime, settings
):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await _counts(runtime, a)
    other = create_engine(settings.database_url)  # another process's connection, holding the row (and on SQLite
    try:  # the database's write lock) past the service's lock timeout
        async with other.connect() as conn:
            await conn.begin()
            await conn.execute(select(Appointment.id).where(Appointment.id == a).with_for_update())
            response = await client.post(
                f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "Away", "version": "1"}
            )
            await conn.rollback()
    finally:
        await other.dispose()

    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    body = response.json()
    assert body["kind"] == "error" and body["code"] == "SERVICE_BUSY" and body["status"] == 503
    assert "Nothing was changed" in body["message"]
    assert await _counts(runtime, a) == before

    retried = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "Away", "version": "1"}
    )
    assert retried.status_code == 200, retried.text
    status, version, history, _ = await _counts(runtime, a)
    assert (status, version, history) == (int(Status.DECLINED), before[1] + 1, before[2] + 1)


async def test_a_stream_ticket_redeemed_while_storage_is_locked_is_503_and_stays_usable(
    client, login, demo, runtime, settings
):
    doctor = await login("doctor1")
    ticket = (await client.post("/profile/stream/ticket", headers=doctor.headers)).json()["ticket"]
    other = create_engine(settings.database_url)
    try:
        async with other.connect() as conn:
            await conn.begin()
            await conn.execute(select(StreamTicket.ticket_hash).with_for_update())
            response = await client.get("/profile/stream", params={"ticket": ticket, "client": "busy-1"})
            await conn.rollback()
    finally:
        await other.dispose()
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "SERVICE_BUSY" and response.headers["retry-after"] == "1"
    assert response.headers["x-content-type-options"] == "nosniff"  # the stream's own path adds them too

    async with runtime.db.read() as s:  # the refused attempt did not spend the ticket
        assert (
            await s.scalar(select(StreamTicket.used_at).where(StreamTicket.ticket_hash == token_hash(ticket))) is None
        )
