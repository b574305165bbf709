"""Free times of a doctor at a location (``domain/scheduling/free_times.py``), read with the facts the rules need: the
doctor's work hours there (the clinic's cached reference data) and the approved appointments and open offers in the
range (one bounded index range)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from doctordesk.domain import moments
from doctordesk.domain.edges import expiry_edge
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.scheduling.booking import VISIT_MINUTES, first_free, in_week, search_spans, week_of
from doctordesk.domain.scheduling.free_times import (
    MAX_DAYS,
    FreeTimeQuery,
    free_of,
    free_starts_edge,
    hours_at,
    slot_starts,
)
from doctordesk.domain.scheduling.suggestions import MAX_DURATION
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.scheduling.busy_times import busy_times
from doctordesk.services.scheduling.clinic_facts import cached_clinic


async def slot_times(
    rt: Runtime,
    *,
    doctor_id: int,
    location_id: int,
    first_day: date,
    last_day: date,
    duration_minutes: int,
    step_minutes: int,
    edge: list[datetime | None] | None = None,
) -> tuple[str, list[tuple[datetime, str]]]:
    """The location's timezone and every bookable start of the grid between two local days, inclusive, each with
    its ``SlotStatus`` (free, busy, busy-tentative): the one computation behind free times (``free_of`` keeps the
    free ones) and FHIR's Slots. ``edge``, when given, gets when time alone next changes the grid
    (``free_times.free_starts_edge``)."""
    fields: dict[str, str] = {}
    problem = moments.day_problem(first_day) or moments.day_problem(last_day)
    if problem:
        fields["from"] = problem
    elif last_day < first_day:
        fields["to"] = N_("Must not be before 'from'.")
    elif (last_day - first_day).days >= MAX_DAYS:
        fields["to"] = Text("At most {count} days from 'from'.", count=MAX_DAYS)
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
        if doctor_id not in c.directory.doctors:
            fields["doctor"] = N_("Unknown doctor.")
        if location_id not in c.directory.locations:
            fields["location"] = N_("Unknown location.")
        if fields:
            raise ValidationFailed(fields=fields)
        timezone = c.directory.locations[location_id]
        zone = ZoneInfo(timezone)
        lo = datetime.combine(first_day, time.min, tzinfo=zone) - MAX_DURATION
        hi = datetime.combine(last_day + timedelta(days=1), time.min, tzinfo=zone) + timedelta(hours=1)
        busy = await busy_times(session, 0, [(doctor_id, lo, hi)], now=rt.clock.now())
    query = FreeTimeQuery(
        doctor_id=doctor_id,
        location_id=location_id,
        timezone=timezone,
        first_day=first_day,
        last_day=last_day,
        duration_minutes=duration_minutes,
        step_minutes=step_minutes,
    )
    now, hours, exceptions = rt.clock.now(), hours_at(c.work_hours, doctor_id, location_id), c.hours_exceptions
    starts = slot_starts(
        query, now=now, horizon=c.horizon, hours=hours, busy=busy, exceptions=exceptions.get(doctor_id, ())
    )
    if edge is not None:
        edge.append(
            free_starts_edge(query, now=now, horizon=c.horizon, hours=hours, exceptions=exceptions.get(doctor_id, ()))
        )
        edge.append(expiry_edge((b.expires for b in busy), now))  # a held time comes free
    return timezone, starts


async def visit_times(
    rt: Runtime,
    *,
    doctor_id: int,
    location_id: int,
    first_day: date,
    last_day: date,
    edge: list[datetime | None] | None = None,
) -> tuple[str, list[datetime]]:
    """The location's timezone and the free starts of one booking-screen visit between two local days (inclusive):
    ``slot_times`` on the visit's grid, the free ones kept."""
    timezone, grid = await slot_times(
        rt,
        doctor_id=doctor_id,
        location_id=location_id,
        first_day=first_day,
        last_day=last_day,
        duration_minutes=VISIT_MINUTES,
        step_minutes=VISIT_MINUTES,
        edge=edge,
    )
    return timezone, free_of(grid)


async def first_free_span(
    rt: Runtime,
    *,
    doctor_id: int,
    location_id: int,
    first_week: date,
    last_week: date,
    edge: list[datetime | None] | None = None,
) -> tuple[str | None, list[datetime]]:
    """The free starts (one visit of the booking screen's length) of the first span of ``booking.search_spans``,
    from the week starting ``first_week`` to the one starting ``last_week``, that has any, with the location's
    timezone; ``(None, [])`` when none has one up to there. One read of busy times per span, and the search stops
    at the first span with a free time, so the usual case costs what showing one week does. ``edge`` gets the
    moments of every span looked through (a held time coming free, a time coming within the horizon)."""
    for first_day, last_day in search_spans(first_week, last_week):
        timezone, free = await visit_times(
            rt, doctor_id=doctor_id, location_id=location_id, first_day=first_day, last_day=last_day, edge=edge
        )
        if free:
            return timezone, free
    return None, []


async def first_free_week(
    rt: Runtime,
    *,
    doctor_id: int,
    location_id: int,
    first_week: date,
    last_week: date,
    edge: list[datetime | None],
) -> tuple[date | None, list[datetime]]:
    """The first week (its Monday, in the location's days) from ``first_week`` to ``last_week`` that has a free
    visit, with that week's free starts; ``(None, [])`` when no week up to there has one (``first_free_span``).
    ``edge`` gets the moments that change the answer: those of every span looked through and the shown week's."""
    timezone, free = await first_free_span(
        rt, doctor_id=doctor_id, location_id=location_id, first_week=first_week, last_week=last_week, edge=edge
    )
    start = first_free(free)
    if timezone is None or start is None:
        return None, []
    week = week_of(start, timezone)
    return week, in_week(free, week, timezone)
