"""Free times: the starts a doctor can still be booked at, at one location, by the same rules Suggested Scheduling
applies to a proposal (``domain/scheduling/suggestions.py``): at least the lead time and at most the booking horizon
ahead, the whole visit inside one block of work hours in the location's local time, no overlap with what the doctor is
already taken for.

Candidate starts step through each work-hours block from its opening, on local wall-clock times, so they stay on
the clinic's grid across clock changes; a local time that does not exist on a spring-forward day is skipped, and the
repeated hour in autumn means its first occurrence (as everywhere else).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import NotRequired, TypedDict, Unpack

from doctordesk.domain.scheduling.suggestions import (
    LEAD_TIME,
    Busy,
    ExceptionKind,
    Hours,
    HoursException,
    Proposal,
    beyond_horizon,
    local_to_utc,
    overlaps,
    too_early,
    within_hours,
)

MAX_DAYS = 31
MIN_STEP_MINUTES = 5


@dataclass(frozen=True, slots=True)
class FreeTimeQuery:
    doctor_id: int
    location_id: int
    timezone: str  # the location's IANA zone: days and hours are local to it
    first_day: date
    last_day: date  # inclusive
    duration_minutes: int
    step_minutes: int


def _local_starts(day: date, block: Hours, step: timedelta, duration: timedelta) -> Iterator[time]:
    at = datetime.combine(day, block.opens)
    closes = datetime.combine(day, block.closes)
    while at + duration <= closes:
        yield at.time()
        at += step


class SlotStatus:
    """What one start of the grid is (FHIR's Slot statuses): free, taken for sure (an approved appointment), or
    taken for now (an open offer, a held time)."""

    FREE = "free"
    BUSY = "busy"
    TENTATIVE = "busy-tentative"


def free_of(grid: Sequence[tuple[datetime, str]]) -> list[datetime]:
    """The free starts of a grid of ``(start, SlotStatus)``."""
    return [start for start, status in grid if status == SlotStatus.FREE]


class GridFacts(TypedDict):
    """What the grid of ``slot_starts`` is computed from, besides the query."""

    now: datetime
    horizon: timedelta
    hours: Sequence[Hours]
    busy: Sequence[Busy]
    exceptions: NotRequired[Sequence[HoursException]]


def free_starts(query: FreeTimeQuery, **facts: Unpack[GridFacts]) -> list[datetime]:
    """The free starts (UTC, ascending) of ``query``'s doctor at its location between its days, given the doctor's
    hours there, the dated exceptions (holidays, absences, extra days) and the times the doctor is taken
    (``busy``: approved appointments, open offers and held times)."""
    return free_of(slot_starts(query, **facts))


def slot_starts(
    query: FreeTimeQuery,
    *,
    now: datetime,
    horizon: timedelta,
    hours: Sequence[Hours],
    busy: Sequence[Busy],
    exceptions: Sequence[HoursException] = (),
) -> list[tuple[datetime, str]]:
    """Every start of the grid that is bookable but for what the doctor is taken for, with its ``SlotStatus``
    (UTC, ascending): ``free_starts`` is its free part. A start overlapping anything approved is busy, one
    overlapping only offers or holds tentative."""
    taken = [b for b in busy if b.doctor_id == query.doctor_id]
    found: dict[datetime, str] = {}
    for start in candidate_starts(query, hours=hours, exceptions=exceptions):
        if too_early(start, now) or beyond_horizon(start, now, horizon):
            continue
        p = Proposal(1, query.doctor_id, query.location_id, start, query.duration_minutes)
        if not within_hours(p, query.timezone, hours, exceptions):
            continue  # a block that ends after a clock change can be shorter than its wall-clock span
        found[start] = _status([b for b in taken if overlaps(p.start, p.end, b.start, b.end)])
    return sorted(found.items())


def _status(overlapping: Sequence[Busy]) -> str:
    if not overlapping:
        return SlotStatus.FREE
    return SlotStatus.TENTATIVE if all(b.tentative for b in overlapping) else SlotStatus.BUSY


def candidate_starts(
    query: FreeTimeQuery, *, hours: Sequence[Hours], exceptions: Sequence[HoursException] = ()
) -> Iterator[datetime]:
    """Every start (UTC) the doctor's hours and extra days offer between ``query``'s days, free or not, whenever."""
    duration = timedelta(minutes=query.duration_minutes)
    step = timedelta(minutes=query.step_minutes)
    day = query.first_day
    while day <= query.last_day:
        extra = [
            Hours(day.weekday(), e.opens, e.closes)
            for e in exceptions
            if e.kind == ExceptionKind.EXTRA and e.applies(day, query.location_id) and e.opens and e.closes
        ]
        for block in [*(h for h in hours if h.weekday == day.weekday()), *extra]:
            for at in _local_starts(day, block, step, duration):
                start = local_to_utc(day, at, query.timezone)
                if start is not None:
                    yield start
        day += timedelta(days=1)


def free_starts_edge(
    query: FreeTimeQuery,
    *,
    now: datetime,
    horizon: timedelta,
    hours: Sequence[Hours],
    exceptions: Sequence[HoursException] = (),
) -> datetime | None:
    """When time alone next changes ``free_starts``'s answer: a candidate start comes within the lead time (it
    is no longer free) or within the horizon (it may become free). Busy times change with events, but for a
    held time coming free (``edges.expiry_edge``)."""
    moments = (
        s - span for s in candidate_starts(query, hours=hours, exceptions=exceptions) for span in (LEAD_TIME, horizon)
    )
    return min((m for m in moments if m > now), default=None)


def hours_at(work_hours: Mapping[tuple[int, int], Sequence[Hours]], doctor_id: int, location_id: int) -> list[Hours]:
    return list(work_hours.get((doctor_id, location_id), ()))
