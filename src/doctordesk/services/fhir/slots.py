"""The schedule's grid as FHIR Slot resources (docs/fhir.md#slot): the starts ``services.booking.free_times`` computes
for the booking screen and the integration API (same work hours, exceptions, lead time and overlaps), one visit long,
each ``free``, ``busy`` (an approved appointment) or ``busy-tentative`` (an open offer, a held time). A slot's id is
``<doctor>-<location>-<UTC start as YYYYMMDDHHMM>``; a time outside the work hours, too soon or beyond the booking
horizon is no slot (404)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from doctordesk.domain import moments
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.scheduling.booking import VISIT_MINUTES
from doctordesk.domain.scheduling.free_times import MAX_DAYS
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.booking import free_times
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.access import Caller, require_some_scope
from doctordesk.services.fhir.directory import pair_id, places
from doctordesk.services.fhir.search import Search, bundle, check
from doctordesk.services.fhir.sorting import SortKey
from doctordesk.services.scheduling.clinic_facts import cached_clinic

SEARCH_PARAMETERS = ("schedule", "start", "status")
SORTS = ("start",)
DEFAULT_SORT = (SortKey("start"),)
SLOT_STATUSES = frozenset({"free", "busy", "busy-unavailable", "busy-tentative", "entered-in-error"})
Grid = list[tuple[datetime, str]]
_SLOT = re.compile(r"([1-9][0-9]{0,15})-([1-9][0-9]{0,15})-(\d{12})", re.ASCII)


def slot_id(doctor_id: int, location_id: int, start: datetime) -> str:
    return f"{doctor_id}-{location_id}-{start.astimezone(UTC):%Y%m%d%H%M}"


def slot(doctor_id: int, location_id: int, start: datetime, timezone: str, status: str = "free") -> dict[str, Any]:
    zone = ZoneInfo(timezone)
    return {
        "resourceType": "Slot",
        "id": slot_id(doctor_id, location_id, start),
        "schedule": {"reference": f"Schedule/{doctor_id}-{location_id}"},
        "status": status,
        "start": fhir_mapping.local_instant(start, zone),
        "end": fhir_mapping.local_instant(start + timedelta(minutes=VISIT_MINUTES), zone),
    }


async def grid(rt: Runtime, doctor_id: int, location_id: int, lo: datetime, hi: datetime) -> tuple[str, Grid]:
    """The grid's starts in ``[lo, hi)`` with their statuses, computed over the location's local days that range
    touches; NotFound when the doctor has no schedule (work hours) at the location."""
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    if (doctor_id, location_id) not in places(c):
        raise NotFound(N_("Schedule not found."))
    zone = ZoneInfo(c.directory.locations[location_id])
    first, last = lo.astimezone(zone).date(), (hi - timedelta(microseconds=1)).astimezone(zone).date()
    if (last - first).days >= MAX_DAYS:
        raise ValidationFailed(fields={"start": Text("Search at most {max_days} days at once.", max_days=MAX_DAYS)})
    timezone, starts = await free_times.slot_times(
        rt,
        doctor_id=doctor_id,
        location_id=location_id,
        first_day=first,
        last_day=last,
        duration_minutes=VISIT_MINUTES,
        step_minutes=VISIT_MINUTES,
    )
    return timezone, [(s, status) for s, status in starts if lo <= s < hi]


async def read(rt: Runtime, caller: Caller, raw: str) -> dict[str, Any]:
    require_some_scope(caller)
    match = _SLOT.fullmatch(raw)
    if match is None:
        raise NotFound(N_("Slot not found."))
    try:
        start = datetime.strptime(match[3], "%Y%m%d%H%M").replace(tzinfo=UTC)
    except ValueError:
        raise NotFound(N_("Slot not found.")) from None
    if moments.problem(start) is not None:
        raise NotFound(N_("Slot not found."))
    doctor_id, location_id = int(match[1]), int(match[2])
    timezone, starts = await grid(rt, doctor_id, location_id, start, start + timedelta(minutes=1))
    if not starts or starts[0][0] != start:
        raise NotFound(N_("Slot not found."))
    return slot(doctor_id, location_id, start, timezone, starts[0][1])


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The slots of one ``schedule`` (required) in a ``start`` range (both ends, at most 31 days), by ``status``."""
    require_some_scope(caller)
    checked = check(request, SEARCH_PARAMETERS, sorts=SORTS, default_sort=DEFAULT_SORT)
    schedules = fhir_mapping.token_list(checked.params.get("schedule", []))
    pair = pair_id(schedules[0].removeprefix("Schedule/")) if len(schedules) == 1 else None
    if pair is None:
        raise ValidationFailed(fields={"schedule": N_("Name one schedule: Schedule/<doctor>-<location>.")})
    tests = fhir_mapping.date_tests(checked.params.get("start", []), name="start", now=rt.clock.now())
    span = fhir_mapping.date_range(checked.params.get("start", []), name="start", now=rt.clock.now(), ne=False)
    if span.lo is None or span.hi is None:
        raise ValidationFailed(fields={"start": N_("Give both ends, e.g. start=ge2026-11-23&start=lt2026-11-30.")})
    statuses = set(fhir_mapping.token_list(checked.params.get("status", [])))
    if statuses - SLOT_STATUSES:
        raise ValidationFailed(fields={"status": N_("Use a Slot status (free, busy, ...).")})
    timezone, starts = await grid(rt, pair[0], pair[1], span.lo, span.hi)
    starts = [(s, st) for s, st in starts if all(t.holds(s) for t in tests) and (not statuses or st in statuses)]

    def values(s: tuple[datetime, str]) -> tuple[Any, ...]:
        return s[0], slot_id(pair[0], pair[1], s[0])

    rows = sorting.page_in_memory(checked.sort, starts, values, checked.sort_after, checked.count + 1)
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda s: slot(pair[0], pair[1], s[0], timezone, s[1]),
        position=lambda s: sorting.encode_cursor(checked.sort, values(s)),
    )
