"""A background round with nothing to do is one read: the waitlist's round, the webhook dispatcher's claim and the
bulk exporter's round run a single statement and write nothing on an empty clinic (every process, every few
seconds). The waitlist's round still does each part of its work when there is some: each case below is the one
thing a round would have to look after."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, select, update

from doctordesk.bootstrap import build_bulk_exporter, build_runtime, build_webhook_dispatcher
from doctordesk.config import Settings
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.domain.waitlist.rules import EntryState, OfferState
from doctordesk.runtime import Runtime
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

DEMO_APPOINTMENT = 6  # Dr. Berger, Berlin, approved, the day after the test's Monday


@pytest.fixture
async def runtime(settings: Settings, clock: FixedClock) -> AsyncIterator[Runtime]:
    """The app's runtime without its background tasks: the statements counted are the round's alone."""
    rt = build_runtime(settings, clock=clock)
    yield rt
    await rt.db.dispose()


@pytest.fixture
def executed(runtime: Runtime) -> Iterator[list[str]]:
    """Every statement run on any of the runtime's engines but the transactions' own (BEGIN, COMMIT)."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.split()[0].upper() not in {"BEGIN", "COMMIT", "ROLLBACK"}:
            seen.append(statement)

    db = runtime.db
    # One listener a pool: PostgreSQL's screens' engine shares the main one's, whose listeners hear it too.
    engines = {id(e): e.sync_engine for e in db.pooled_engines}
    for engine in engines.values():
        event.listen(engine, "before_cursor_execute", record)
    yield seen
    for engine in engines.values():
        event.remove(engine, "before_cursor_execute", record)


def _writes(statements: list[str]) -> list[str]:
    return [s for s in statements if s.split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]


async def test_an_idle_waitlist_round_is_one_read(runtime, executed):
    done = await run_round(runtime)
    assert (done.offered, done.expired, done.offers) == (0, 0, [])
    assert len(executed) == 1 and _writes(executed) == []


async def test_an_idle_webhook_dispatcher_round_is_one_read(runtime, executed):
    dispatcher = build_webhook_dispatcher(runtime)
    try:
        assert await dispatcher.round() is False
    finally:
        await dispatcher.close()
    assert len(executed) == 1 and _writes(executed) == []
    assert "FOR UPDATE" not in executed[0]


async def test_an_idle_bulk_export_round_is_one_read(runtime, executed):
    assert await build_bulk_exporter(runtime).round() is False
    assert len(executed) == 1 and _writes(executed) == []


# --- a round with work does it ----------------------------------------------------------------------------------


async def _appointment(runtime: Runtime) -> Appointment:
    async with runtime.db.read() as s:
        a = await s.get(Appointment, DEMO_APPOINTMENT)
        assert a is not None
        return a


async def _entry(runtime: Runtime, a: Appointment, *, state: EntryState, until_days: int) -> int:
    now = runtime.clock.now()
    values = {
        "patient_id": a.patient_id,
        "doctor_id": a.doctor_id,
        "location_id": a.location_id,
        "service": a.service,
        "until": now.date() + timedelta(days=until_days),
        "days": 0b11111,
        "time_from": a.start_at.time().replace(hour=8, minute=0),
        "time_to": a.start_at.time().replace(hour=18, minute=0),
        "appointment_id": None,
        "state": state.value,
        "created_at": now - timedelta(days=3),
        "ended_at": None,
    }
    async with runtime.db.transaction() as s:
        return int((await s.execute(insert(WaitlistEntry).values(values).returning(WaitlistEntry.id))).scalar_one())


async def _offer(
    runtime: Runtime, a: Appointment, entry_id: int, *, state: OfferState, expires_in: timedelta, taken: bool = False
) -> tuple[int, int]:
    """An offer of a coming time of the appointment's doctor (an hour after it) to the entry: (time, offer)."""
    now = runtime.clock.now()
    async with runtime.db.transaction() as s:
        time_id = (
            await s.execute(
                insert(WaitlistTime)
                .values(
                    doctor_id=a.doctor_id,
                    location_id=a.location_id,
                    start_at=a.start_at + timedelta(hours=1),
                    duration_minutes=30,
                    found_at=now - timedelta(hours=2),
                    taken_offer_id=None,
                )
                .returning(WaitlistTime.id)
            )
        ).scalar_one()
        offer_id = (
            await s.execute(
                insert(WaitlistOffer)
                .values(
                    entry_id=entry_id,
                    time_id=time_id,
                    patient_id=a.patient_id,
                    state=state.value,
                    offered_at=now - timedelta(hours=2),
                    expires_at=now + expires_in,
                    answered_at=None,
                    appointment_id=a.id if taken else None,
                    moved=False,
                )
                .returning(WaitlistOffer.id)
            )
        ).scalar_one()
        if taken:
            await s.execute(update(WaitlistTime).where(WaitlistTime.id == time_id).values(taken_offer_id=offer_id))
    return int(time_id), int(offer_id)


async def test_a_waiting_entry_past_its_last_day_is_ended_by_the_round(runtime, demo):
    a = await _appointment(runtime)
    entry_id = await _entry(runtime, a, state=EntryState.WAITING, until_days=-3)
    await run_round(runtime)
    async with runtime.db.read() as s:
        assert await s.scalar(select(WaitlistEntry.state).where(WaitlistEntry.id == entry_id)) == "expired"


async def test_a_lapsed_open_offer_of_an_entry_no_longer_waiting_is_expired_by_the_round(runtime, demo):
    a = await _appointment(runtime)
    entry_id = await _entry(runtime, a, state=EntryState.LEFT, until_days=10)
    _, offer_id = await _offer(runtime, a, entry_id, state=OfferState.OPEN, expires_in=timedelta(minutes=-1))
    done = await run_round(runtime)
    assert done.expired == 1
    async with runtime.db.read() as s:
        assert await s.scalar(select(WaitlistOffer.state).where(WaitlistOffer.id == offer_id)) == "expired"


async def test_a_taken_time_whose_request_was_declined_is_given_back_with_no_one_waiting(runtime, demo):
    """No entry waits and no offer is open: the one taken time still makes the round give it back."""
    a = await _appointment(runtime)
    entry_id = await _entry(runtime, a, state=EntryState.SERVED, until_days=10)
    accepted = OfferState.ACCEPTED
    time_id, _ = await _offer(runtime, a, entry_id, state=accepted, expires_in=timedelta(hours=1), taken=True)
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a.id).values(status=int(Status.DECLINED)))
    await run_round(runtime)
    async with runtime.db.read() as s:
        assert await s.scalar(select(WaitlistTime.taken_offer_id).where(WaitlistTime.id == time_id)) is None
