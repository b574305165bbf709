"""Each dashboard figure worked out by hand on a clinic made for it (docs/dashboard.md), at fixed moments, on
SQLite and PostgreSQL: days in the clinic's zone (a request at 23:30 UTC belongs to the next Berlin day), a day with
none, the 90-day window's first and last day, the week's median and 90th percentile, offered hours from weekly
hours and exceptions, a doctor without hours, no-shows and late cancellations, one doctor's scope."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.domain.dashboard.figures import Figure
from doctordesk.services.dashboard import screen as dashboard
from doctordesk.store.mail_tables import AppointmentConfirmation, ReminderSent
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime
from tests.integration.dashboard.clinic import Clinic, utc

# Monday 23 November 2026, 08:00 in Berlin: the window is 26 August to 23 November, across the clock change.
NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
R, A, D, P, C = Status.REQUESTED, Status.APPROVED, Status.DECLINED, Status.PENDING_RESPONSE, Status.CANCELED


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


async def figure(runtime, key: str, doctor_id: int | None = None) -> Figure:
    _window, computed, _fresher = await dashboard.figures(runtime, doctor_id)
    return next(f for m, f in computed if m.key == key)


def by_day(f: Figure) -> dict[date, int]:
    return {r.key: r.values[0] for r in f.rows}  # type: ignore[misc]


async def test_requests_are_counted_on_the_clinics_local_day_over_exactly_90_days(runtime, clock):
    c = await Clinic(runtime).build()
    for created in ("2026-11-22 22:30", "2026-11-22 23:30", "2026-11-20 10:00", "2026-08-25 22:30",
                    "2026-08-25 21:30"):  # fmt: skip
        await c.appointment("ada", created=utc(created))
    await c.appointment("bo", created=utc("2026-11-20 11:00"))
    f = await figure(runtime, "requests")
    days = by_day(f)
    assert len(days) == 90 and min(days) == date(2026, 8, 26) and max(days) == date(2026, 11, 23)
    assert days[date(2026, 11, 23)] == 1  # 23:30 UTC is 00:30 in Berlin
    assert days[date(2026, 11, 22)] == 1
    assert days[date(2026, 11, 21)] == 0  # a day with none
    assert days[date(2026, 11, 20)] == 2
    assert days[date(2026, 8, 26)] == 1  # 00:30 summer time: the window's first day; 23:30 the day before is out
    assert sum(days.values()) == 5
    only_ada = by_day(await figure(runtime, "requests", c.ids["ada"]))
    assert only_ada[date(2026, 11, 20)] == 1 and sum(only_ada.values()) == 4


async def test_the_window_moves_with_the_clock_at_the_zones_midnight(runtime, clock):
    c = await Clinic(runtime).build()
    await c.appointment("ada", created=utc("2026-08-25 22:30"))  # 26 Aug, 00:30 in Berlin
    assert sum(by_day(await figure(runtime, "requests")).values()) == 1
    clock.at = datetime(2026, 11, 23, 22, 59, tzinfo=UTC)  # still 23 Nov in Berlin
    assert sum(by_day(await figure(runtime, "requests")).values()) == 1
    clock.at = datetime(2026, 11, 23, 23, 0, tzinfo=UTC)  # 24 Nov has begun in Berlin: 26 Aug leaves the window
    days = by_day(await figure(runtime, "requests"))
    assert min(days) == date(2026, 8, 27) and max(days) == date(2026, 11, 24) and sum(days.values()) == 0


async def test_decision_time_is_the_weeks_median_and_90th_percentile_of_first_decisions(runtime, clock):
    c = await Clinic(runtime).build()
    cases = [
        ("2026-11-16 08:00", A, "2026-11-16 10:00"),  # 2 h
        ("2026-11-17 08:00", D, "2026-11-17 12:00"),  # 4 h
        ("2026-11-18 00:00", P, "2026-11-18 10:00"),  # 10 h: other times offered
    ]
    for created, to, at in cases:
        history = [(None, R, utc(created), {}), (R, to, utc(at), {})]
        if to is P:  # the patient's later answer is no decision of the doctor's
            history.append((P, A, utc(at) + timedelta(hours=30), {}))
        await c.appointment("ada", created=utc(created), status=to, history=history)
    # A request canceled by the patient before any decision, and one decided the week before (decided in its week).
    await c.appointment("bo", created=utc("2026-11-16 08:00"), status=C, history=[(R, C, utc("2026-11-16 09:00"), {})])
    await c.appointment("bo", created=utc("2026-11-13 08:00"), status=A, history=[(R, A, utc("2026-11-15 20:00"), {})])
    rows = {r.key: r.values for r in (await figure(runtime, "decision-time")).rows}
    assert rows[date(2026, 11, 16)] == (3, 4.0, 10.0)
    assert rows[date(2026, 11, 9)] == (1, 60.0, 60.0)
    assert rows[date(2026, 11, 2)] == (0, None, None)  # a week without decisions has no median
    assert min(rows) == date(2026, 8, 24) and max(rows) == date(2026, 11, 23)  # the weeks the window touches
    ada = {r.key: r.values for r in (await figure(runtime, "decision-time", c.ids["ada"])).rows}
    assert ada[date(2026, 11, 9)] == (0, None, None)


async def test_booked_share_sets_approved_and_completed_hours_against_offered_hours(runtime, clock):
    c = await Clinic(runtime).build()
    # 13 Mondays of 4 hours in the window = 52 h; a holiday on a Monday -4, an extra Saturday +2, a partial
    # absence -1: 49 h offered.
    await c.exception("ada", date(2026, 11, 16), "holiday")
    await c.exception("ada", date(2026, 11, 21), "extra", time(10), time(12))
    await c.exception("ada", date(2026, 11, 9), "absence", time(8), time(9))
    created = utc("2026-08-01 08:00")
    await c.appointment("ada", created=created, start=utc("2026-11-23 08:00"), status=A, minutes=60)
    await c.appointment("ada", created=created, start=utc("2026-11-02 08:00"), status=Status.COMPLETED)
    await c.appointment("ada", created=created, start=utc("2026-11-02 09:00"), status=C)  # not booked
    await c.appointment("ada", created=created, start=utc("2026-11-02 10:00"), status=Status.NO_SHOW)
    await c.appointment("ada", created=created, start=utc("2026-08-24 08:00"), status=A)  # before the window
    rows = {r.key: r.values for r in (await figure(runtime, "booked-share")).rows}
    assert rows["Dr. Ada Hours"] == (49.0, 1.5, 3.1)
    assert rows["Dr. Bo Nohours"] == (0.0, 0.0, None)  # no hours: no share, never a division by zero
    mine = {r.key: r.values for r in (await figure(runtime, "booked-share", c.ids["bo"])).rows}
    assert list(mine) == ["Dr. Bo Nohours"]


async def test_no_shows_and_late_cancellations_are_shares_of_the_booked_appointments_due(runtime, clock):
    c = await Clinic(runtime).build()
    created = utc("2026-10-01 08:00")

    async def booked(start: str, status: Status, cancel: tuple[float, str] | None = None) -> None:
        history = [(R, A, created, {})]
        if cancel is not None:
            hours_before, by = cancel
            at = utc(start) - timedelta(hours=hours_before)
            history.append((A, C, at, {"action": "cancel", "by": by}))
        await c.appointment("ada", created=created, start=utc(start), status=status, history=history)

    await booked("2026-11-16 08:00", Status.COMPLETED)
    await booked("2026-11-17 08:00", Status.COMPLETED)
    await booked("2026-11-18 08:00", Status.NO_SHOW)
    await booked("2026-11-19 08:00", A)  # due, nothing reported yet
    await booked("2026-11-20 08:00", C, cancel=(2, "patient"))  # late: within 24 h
    await booked("2026-11-20 09:00", C, cancel=(48, "patient"))  # in time
    await booked("2026-11-20 10:00", C, cancel=(1, "clinic"))  # the clinic's own cancel is not the patient's
    await booked("2026-11-23 10:00", A)  # later today: not due yet
    # Canceled while still a request: never booked, not counted.
    await c.appointment("ada", created=created, start=utc("2026-11-20 11:00"), status=C,
                        history=[(R, C, utc("2026-11-20 10:30"), {"by": "patient"})])  # fmt: skip
    rows = {r.key: r.values for r in (await figure(runtime, "attendance")).rows}
    assert rows[date(2026, 11, 16)] == (7, 1, 14.3, 1, 14.3)
    assert rows[date(2026, 11, 23)] == (0, 0, None, 0, None)


async def test_the_clinic_cancel_deadline_decides_what_is_late(runtime, clock):
    runtime.settings.patient_cancel_hours = 1
    c = await Clinic(runtime).build()
    created = utc("2026-10-01 08:00")
    for hours_before in (2, 0.5):
        start = utc("2026-11-20 08:00") + timedelta(hours=hours_before)
        await c.appointment("ada", created=created, start=start, status=C, history=[
            (R, A, created, {}), (A, C, start - timedelta(hours=hours_before), {"by": "patient"})])  # fmt: skip
    rows = {r.key: r.values for r in (await figure(runtime, "attendance")).rows}
    assert rows[date(2026, 11, 16)] == (2, 0, 0.0, 1, 50.0)


async def test_reminders_confirmed_are_a_share_of_the_appointments_reminded_in_the_week_of_their_start(runtime, clock):
    c = await Clinic(runtime).build()
    created = utc("2026-10-01 08:00")
    sent = utc("2026-11-15 08:00")

    async def reminded(doctor: str, start: str, *, confirmed: bool, windows: tuple[int, ...] = (24,)) -> None:
        a = await c.appointment(doctor, created=created, start=utc(start), status=Status.APPROVED)
        async with runtime.db.transaction() as s:
            for hours in windows:
                s.add(ReminderSent(appointment_id=a, start_at=utc(start), hours=hours, sent_at=sent))
            if confirmed:
                s.add(AppointmentConfirmation(appointment_id=a, start_at=utc(start), confirmed_at=sent))

    await reminded("ada", "2026-11-16 08:00", confirmed=True, windows=(24, 2))  # two reminders: one appointment
    await reminded("ada", "2026-11-17 08:00", confirmed=False)
    await reminded("bo", "2026-11-18 08:00", confirmed=True)
    await reminded("ada", "2026-11-23 06:00", confirmed=True)  # this week, already begun
    await reminded("ada", "2026-11-24 08:00", confirmed=True)  # tomorrow: not yet in the window
    clinic = {r.key: r.values for r in (await figure(runtime, "reminders")).rows}
    assert clinic[date(2026, 11, 16)] == (3, 2, 66.7)
    assert clinic[date(2026, 11, 23)] == (1, 1, 100.0)
    assert clinic[date(2026, 11, 9)] == (0, 0, None)
    ada = {r.key: r.values for r in (await figure(runtime, "reminders", c.ids["ada"])).rows}
    assert ada[date(2026, 11, 16)] == (2, 1, 50.0)


async def test_freed_times_refilled_from_the_waitlist_and_the_median_hours_to_a_taker(runtime, clock):
    c = await Clinic(runtime).build()
    async with runtime.db.transaction() as s:
        entry = WaitlistEntry(patient_id=c.ids["patient"], doctor_id=None, location_id=c.ids["berlin"],
                              service="GP", until=date(2026, 12, 31), days=127, time_from=time(8), time_to=time(18),
                              state="waiting", created_at=utc("2026-11-01 08:00"))  # fmt: skip
        s.add(entry)
        await s.flush()

        async def freed(doctor: str, found: str, taken_after_hours: float | None) -> None:
            start = utc(found) + timedelta(days=3)
            t = WaitlistTime(doctor_id=c.ids[doctor], location_id=c.ids["berlin"], start_at=start,
                             duration_minutes=30, found_at=utc(found))  # fmt: skip
            s.add(t)
            await s.flush()
            if taken_after_hours is not None:
                at = utc(found) + timedelta(hours=taken_after_hours)
                o = WaitlistOffer(entry_id=entry.id, time_id=t.id, patient_id=c.ids["patient"], state="accepted",
                                  offered_at=utc(found), expires_at=at, answered_at=at)  # fmt: skip
                s.add(o)
                await s.flush()
                t.taken_offer_id = o.id

        await freed("ada", "2026-11-16 08:00", 1)
        await freed("ada", "2026-11-17 08:00", 5)
        await freed("bo", "2026-11-18 08:00", 2)
        await freed("ada", "2026-11-19 08:00", None)  # offered, nobody took it
    clinic = {r.key: r.values for r in (await figure(runtime, "waitlist")).rows}
    assert clinic[date(2026, 11, 16)] == (4, 3, 75.0, 2.0)
    assert clinic[date(2026, 11, 9)] == (0, 0, None, None)
    ada = {r.key: r.values for r in (await figure(runtime, "waitlist", c.ids["ada"])).rows}
    assert ada[date(2026, 11, 16)] == (3, 2, 66.7, 1.0)  # median of 1 and 5 hours by nearest rank: the lower
