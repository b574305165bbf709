"""Booking by the patient: what can be chosen and how a choice is settled.

The patient picks a doctor, one of the locations where that doctor has work hours, a service and a week, then one
of the free times of that week (``free_times.py``: the same starts the integration API offers). A choice that no
longer fits (a doctor without hours at the location chosen, a week in the past or beyond the horizon) is settled to
the nearest one that does, so a link kept from yesterday still opens a screen.

A choice without a week (the screen opened afresh, or another doctor, location or service chosen) shows the first
week that has a free time, searched from this week to the horizon's (``search_spans``, ``first_free``): on a
Saturday the patient sees next week's times, not a week already over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

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
    # False: no week was asked, so the screen shows the first week with a free time (``week`` is where the search
    # starts until it is found) and its address names no week, so every poll searches again.
    week_asked: bool = True


def monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def week_days(week: date) -> tuple[date, date]:
    """The first and last day (inclusive) of the week starting ``week``."""
    return week, week + timedelta(days=6)


def last_week(today: date, horizon: timedelta) -> date:
    """The Monday of the last week a patient can look at: the week the clinic's booking horizon ends in."""
    return monday(today + horizon)


def settle(choice: Choice, *, places: Mapping[int, Sequence[int]], today: date, horizon: timedelta) -> Choice:
    """``choice`` made to fit what exists: the first doctor when none (or an unknown one) is chosen, the doctor's first
    location when the chosen one is not theirs, a known service, a week between this one and the one the clinic's
    booking horizon ends in (``last_week``). A picked start survives only when nothing else had to change."""
    doctor = choice.doctor_id if choice.doctor_id in places else next(iter(places), None)
    where = places.get(doctor, ()) if doctor is not None else ()
    location = choice.location_id if choice.location_id in where else (where[0] if where else None)
    service = choice.service if choice.service in SERVICES else next(iter(SERVICES))
    first = monday(today)
    week = min(max(monday(choice.week), first), last_week(today, horizon))
    settled = Choice(doctor, location, service, week, week_asked=choice.week_asked)
    return replace(settled, start=choice.start) if settled == replace(choice, start=None) else settled


# How many weeks one read of busy times covers while the first free week is sought: the common case (a free time
# within four weeks) costs one read, and a doctor with nothing free costs a read per four weeks of the horizon
# rather than one per week (a read of the whole horizon at once would weigh every busy time of a year against
# every candidate start).
SEARCH_WEEKS = 4


def search_spans(first_week: date, last: date) -> list[tuple[date, date]]:
    """The spans of whole weeks (first and last day, inclusive) to look through, in order, from the week starting
    ``first_week`` to the one starting ``last``: ``SEARCH_WEEKS`` weeks each, the last one shorter."""
    spans: list[tuple[date, date]] = []
    week = monday(first_week)
    while week <= last:
        end = min(week + timedelta(weeks=SEARCH_WEEKS), monday(last) + timedelta(weeks=1))
        spans.append((week, end - timedelta(days=1)))
        week = end
    return spans


def first_free(free: Sequence[datetime]) -> datetime | None:
    """The earliest of some free starts (None when there is none)."""
    return min(free, default=None)


def week_of(start: datetime, timezone: str) -> date:
    """The Monday of the week, in the location's days, that a start (UTC) falls in."""
    return monday(start.astimezone(ZoneInfo(timezone)).date())


def in_week(starts: Sequence[datetime], week: date, timezone: str) -> list[datetime]:
    """The starts that fall in the week starting ``week``, in the location's days."""
    return [s for s in starts if week_of(s, timezone) == week]
