"""`seed-demo` gives a consistent clinic whatever day and time it runs: seeded with the clock on each day of the
week, early and late in the day and across both clock changes, no doctor holds two overlapping times (appointments
and open offers), every time is inside the doctor's hours at its location, the future is in the future and the past
in the past, and each pending appointment's offers are on days of their own — checked with the scheduling rules' own
functions (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import select

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.scheduling.suggestions import Hours, Proposal, overlaps, utc_to_local, within_hours
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment, Location, WorkHours

# Mon 23 Nov 2026 to Sun 29 Nov 2026, each at 00:30, 07:00, 12:00 and 23:30 UTC (01:30 and 00:30 of the next
# day in Berlin and London).
WEEK = [
    datetime(2026, 11, 23 + day, hh, mm, tzinfo=UTC)
    for day in range(7)
    for hh, mm in ((0, 30), (7, 0), (12, 0), (23, 30))
]
# Around the clock changes (Europe: back on Sun 25 Oct 2026, forward on Sun 28 Mar 2027, at 01:00 UTC), each day
# of the week before them.
CLOCK_CHANGES = [datetime(2026, 10, 25, 0, 59, tzinfo=UTC) - timedelta(days=n) for n in range(7)] + [
    datetime(2027, 3, 28, 0, 59, tzinfo=UTC) - timedelta(days=n) for n in range(7)
]
HOLDING = {Status.REQUESTED, Status.APPROVED, Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK}
PAST = {Status.COMPLETED}


class _Undo(Exception):
    """Rolls the seeded clinic back, so the next clock seeds an empty database."""


async def _problems(session, now: datetime) -> list[str]:
    hours: dict[tuple[int, int], list[Hours]] = {}
    for h in (await session.execute(select(WorkHours))).scalars():
        hours.setdefault((h.doctor_id, h.location_id), []).append(Hours(h.weekday, h.start_time, h.end_time))
    zones = {loc.id: loc.timezone for loc in (await session.execute(select(Location))).scalars()}
    appointments = list((await session.execute(select(Appointment).order_by(Appointment.id))).scalars())
    offers = list(
        (await session.execute(select(AppointmentOffer).where(AppointmentOffer.state == OfferState.OPEN))).scalars()
    )
    problems: list[str] = []
    held: list[tuple[str, Proposal]] = []
    for a in appointments:
        p = Proposal(0, a.doctor_id, a.location_id, a.start_at.astimezone(UTC), a.duration_minutes)
        status = Status(a.status)
        if not within_hours(p, zones[a.location_id], hours.get((a.doctor_id, a.location_id), [])):
            problems.append(f"appointment {a.id} ({status.name}) outside hours: {p.start}")
        if status in HOLDING and p.start <= now:
            problems.append(f"appointment {a.id} ({status.name}) not in the future: {p.start}")
        if status in PAST and p.end > now:
            problems.append(f"appointment {a.id} ({status.name}) not in the past: {p.start}")
        if status in HOLDING | PAST:
            held.append((f"appointment {a.id}", p))
    by_appointment: dict[int, list[AppointmentOffer]] = {}
    for o in offers:
        p = Proposal(o.n, o.doctor_id, o.location_id, o.start_at.astimezone(UTC), o.duration_minutes)
        if not within_hours(p, zones[o.location_id], hours.get((o.doctor_id, o.location_id), [])):
            problems.append(f"offer {o.appointment_id}/{o.n} outside hours: {p.start}")
        if p.start <= now:
            problems.append(f"offer {o.appointment_id}/{o.n} not in the future: {p.start}")
        held.append((f"offer {o.appointment_id}/{o.n}", p))
        by_appointment.setdefault(o.appointment_id, []).append(o)
    for i, (name, p) in enumerate(held):
        for other_name, q in held[i + 1 :]:
            if p.doctor_id == q.doctor_id and overlaps(p.start, p.end, q.start, q.end):
                problems.append(f"{name} and {other_name} overlap for doctor {p.doctor_id} at {p.start}")
    pending = [a for a in appointments if Status(a.status) in HOLDING - {Status.REQUESTED, Status.APPROVED}]
    for a in pending:
        its = by_appointment.get(a.id, [])
        days = {utc_to_local(o.start_at.astimezone(UTC), zones[o.location_id]).date() for o in its}
        if len(its) != 2 or len(days) != 2:
            problems.append(f"appointment {a.id}'s offers are not two on days of their own: {days}")
    return problems


async def test_the_demo_clinic_is_consistent_whatever_day_and_time_it_is_seeded(runtime):
    passwords = Passwords(time_cost=1, memory_kib=1024)
    found: dict[str, list[str]] = {}
    checked = 0
    for now in WEEK + CLOCK_CHANGES:
        try:
            async with runtime.db.transaction() as session:
                demo = await seed.seed_demo(session, passwords, now)
                assert len(demo.appointments) == 32
                problems = await _problems(session, now)
                if problems:
                    found[f"{now:%a %Y-%m-%d %H:%M}"] = problems
                checked += 1
                raise _Undo
        except _Undo:
            pass
    assert checked == len(WEEK) + len(CLOCK_CHANGES) == 42
    assert found == {}


async def test_the_demo_keeps_its_described_days_where_they_fit(runtime, demo):
    # Seeded on the tests' Monday, the demo's first request is Wednesday's 09:00 in Berlin, as it always was.
    async with runtime.db.read() as session:
        first = await session.get(Appointment, demo.appointments[0])
    assert first is not None
    local = utc_to_local(first.start_at.astimezone(UTC), "Europe/Berlin")
    assert (local.date(), local.time()) == (date(2026, 11, 25), time(9, 0))
