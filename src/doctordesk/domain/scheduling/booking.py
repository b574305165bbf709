"""Booking by the patient: what can be chosen and how a choice is settled.

The patient picks a doctor, one of the locations where that doctor has work hours, a service and a week, then one
of the free times of that week (``free_times.py``: the same starts the integration API offers). A choice that no
longer fits (a doctor without hours at the location chosen, a week in the past or beyond the horizon) is settled to
the nearest one that does, so a link kept from yesterday still opens a screen."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from doctordesk.domain.texts import N_

# The services a patient can book, by the name stored on the appointment, with their label. Every visit booked
# here takes one slot of this length.
SERVICES: dict[str, str] = {
    "consultation": N_("Consultation"),
    "follow-up": N_("Follow-up visit"),
    "teledermatology": N_("Teledermatology"),
}
VISIT_MINUTES = 30
NOTE_MAX = 1000


@dataclass(frozen=True, slots=True)
class Choice:
    doctor_id: int | None
    location_id: int | None
    service: str
    week: date  # the Monday of the week shown
    start: datetime | None = None  # the free time picked (UTC)


def monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def week_days(week: date) -> tuple[date, date]:
    """The first and last day (inclusive) of the week starting ``week``."""
    return week, week + timedelta(days=6)


def last_week(today: date, horizon: timedelta) -> date:
    """The Monday of the last week a patient can look at: the week the clinic's booking horizon ends in."""
    return monday(today + horizon)


def settle(c: Choice, *, places: Mapping[int, Sequence[int]], today: date, horizon: timedelta) -> Choice:
    """``c`` made to fit what exists: the first doctor when none (or an unknown one) is chosen, the doctor's first
    location when the chosen one is not theirs, a known service, a week between this one and the one the clinic's
    booking horizon ends in (``last_week``). A picked start survives only when nothing else had to change."""
    doctor = c.doctor_id if c.doctor_id in places else next(iter(places), None)
    where = places.get(doctor, ()) if doctor is not None else ()
    location = c.location_id if c.location_id in where else (where[0] if where else None)
    service = c.service if c.service in SERVICES else next(iter(SERVICES))
    first = monday(today)
    week = min(max(monday(c.week), first), last_week(today, horizon))
    settled = Choice(doctor, location, service, week)
    return replace(settled, start=c.start) if settled == replace(c, start=None) else settled
