"""``Appointment/$find`` of the Argonaut Scheduling IG (docs/fhir.md#scheduling): the free times between ``start``
and ``end``, for the doctors and locations asked (or every schedule), as ``proposed`` Appointments a client holds
(``$hold``) or books (``$book``). The free times are the Slots' (``services/fhir/slots.grid``, the booking
screen's computation), one visit long."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.booking import SERVICES, VISIT_MINUTES, last_week, monday
from doctordesk.domain.scheduling.free_times import MAX_DAYS, SlotStatus
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.booking import free_times
from doctordesk.services.fhir.access import Caller, patients_visible, require_some_scope
from doctordesk.services.fhir.directory import places
from doctordesk.services.fhir.slots import grid, slot_id
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.store.tables import Patient

PARAMETERS = ("start", "end", "practitioner", "location", "service-type", "patient", "_count")
# Operations take exactly their parameters: anything else is refused rather than ignored.
_OTHERS = frozenset({"_format"})
# The range ``$find`` looks in when none is given: from the first free time on, as long as a range asked may be
# (at most 31 local days).
NEXT_FREE_SPAN = timedelta(days=MAX_DAYS - 1)
_BARE_DATE = N_("Give a date or a dateTime with its offset, without a prefix.")


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ValidationFailed(fields={name: N_("Give it once.")})
    return values[0] if values else None


def _ids(params: dict[str, list[str]], name: str, kind: str, known: Sequence[int]) -> set[int]:
    """The ids a reference parameter names (commas OR), each ``Kind/<id>`` or a bare id; unknown ones are 400."""
    out: set[int] = set()
    for raw in fhir_mapping.token_list(params.get(name, [])):
        row_id = fhir_mapping.reference_id(raw, kind)
        if row_id is None or row_id not in known or ("/" in raw and not raw.startswith(f"{kind}/")):
            raise ValidationFailed(fields={name: Text("Unknown {kind}: {raw}.", kind=kind, raw=raw)})
        out.add(row_id)
    return out


def _instant(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _service(params: dict[str, list[str]]) -> str:
    raw = _one(params, "service-type") or "consultation"
    system, bar, code = raw.rpartition("|")
    if (bar and system != fhir_mapping.SERVICE_SYSTEM) or code not in SERVICES:
        raise ValidationFailed(fields={"service-type": "One of " + ", ".join(SERVICES) + "."})
    return code


def _span(params: dict[str, list[str]], now: datetime) -> tuple[datetime, datetime] | None:
    """The range asked (``start`` and ``end``), or None when neither is given: the next free times are sought."""
    start, end = _one(params, "start"), _one(params, "end")
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise ValidationFailed(
            fields={
                "start" if start is None else "end": N_("Give both start and end, or neither for the next free times.")
            }
        )
    if not start[:1].isdigit() or not end[:1].isdigit():
        raise ValidationFailed(fields={"start" if not start[:1].isdigit() else "end": _BARE_DATE})
    lo = fhir_mapping.date_range([f"ge{start}"], name="start", now=now).lo
    hi = fhir_mapping.date_range([f"le{end}"], name="end", now=now).hi
    assert lo is not None and hi is not None
    if hi <= lo:
        raise ValidationFailed(fields={"end": N_("Must be after start.")})
    return lo, hi


async def _patient(rt: Runtime, caller: Caller, params: dict[str, list[str]]) -> dict[str, Any] | None:
    """``patient``: the one the times are sought for (Argonaut), as the participant's reference. A patient names
    themself; a user names a patient they may see; an API key an existing patient (it may request for any). Anyone
    else is 404 whether that patient exists or not, as everywhere."""
    raw = _one(params, "patient")
    if raw is None:
        return None
    patient_id = fhir_mapping.reference_id(raw, "Patient")
    if patient_id is None or ("/" in raw and not raw.startswith("Patient/")):
        raise ValidationFailed(fields={"patient": N_("Use Patient/<id>.")})
    query = select(Patient.id, Patient.name).where(Patient.id == patient_id)
    if isinstance(caller, Actor):
        query = patients_visible(query, caller)
    async with rt.db.read() as session:
        row = (await session.execute(query)).first()
    if row is None:
        raise NotFound(N_("Patient not found."))
    return fhir_mapping.reference("Patient", row[0], row[1])


def proposed(
    clinic: Clinic,
    doctor_id: int,
    location_id: int,
    start: datetime,
    service: str,
    patient: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A free time as the Appointment a client may hold or book: ``proposed``, its Slot, the doctor and the place,
    and the patient when ``$find`` named one (else the client adds the Patient)."""
    zone = ZoneInfo(clinic.directory.locations[location_id])
    end = start + timedelta(minutes=VISIT_MINUTES)
    code = {"system": fhir_mapping.SERVICE_SYSTEM, "code": service}
    needs = {"required": "required", "status": "needs-action"}
    return {
        "resourceType": "Appointment",
        "status": "proposed",
        "serviceType": [{"coding": [code], "text": service}],
        "start": fhir_mapping.local_instant(start, zone),
        "end": fhir_mapping.local_instant(end, zone),
        "minutesDuration": VISIT_MINUTES,
        "slot": [{"reference": f"Slot/{slot_id(doctor_id, location_id, start)}"}],
        "participant": [
            *([{"actor": patient, "required": "required", "status": "accepted"}] if patient else []),
            {"actor": fhir_mapping.reference("Practitioner", doctor_id, clinic.directory.doctors[doctor_id]), **needs},
            {"actor": fhir_mapping.reference("Location", location_id, clinic.location_names[location_id]), **needs},
        ],
    }


async def _next_free(rt: Runtime, c: Clinic, pairs: Sequence[tuple[int, int]], now: datetime) -> datetime | None:
    """The earliest free time of the schedules ``pairs`` from now to the booking horizon (None when none has
    one), each searched as the booking screen searches its first free week."""
    today = now.date()
    first: datetime | None = None
    for doctor_id, location_id in pairs:
        _zone, free = await free_times.first_free_span(
            rt,
            doctor_id=doctor_id,
            location_id=location_id,
            first_week=monday(today),
            last_week=last_week(today, c.horizon),
        )
        if free and (first is None or free[0] < first):
            first = free[0]
    return first


async def find(rt: Runtime, caller: Caller, items: Sequence[tuple[str, str]], base_url: str) -> dict[str, Any]:
    """The free times as a searchset Bundle of proposed Appointments, earliest first (then by doctor and
    location); ``total`` counts them all, the entries are the first ``_count`` (default 50)."""
    require_some_scope(caller)
    params: dict[str, list[str]] = {}
    for name, value in items:
        params.setdefault(name, []).append(value)
    unknown = sorted(set(params) - set(PARAMETERS) - _OTHERS)
    if unknown:
        raise NotSupported(fields=dict.fromkeys(unknown, N_("Not a parameter of $find.")))
    now = rt.clock.now()
    span = _span(params, now)
    service = _service(params)
    patient = await _patient(rt, caller, params)
    count = fhir_mapping.count(params.get("_count", []))
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    pairs = places(c)
    doctors = _ids(params, "practitioner", "Practitioner", sorted({d for d, _ in pairs}))
    locations = _ids(params, "location", "Location", sorted({loc for _, loc in pairs}))
    asked = [(d, loc) for d, loc in pairs if (not doctors or d in doctors) and (not locations or loc in locations)]
    applied = [(k, v) for k, v in items if k in PARAMETERS]
    if span is None:
        # No range: the next free times, from the first one (up to the horizon) on. The range applied is in the
        # self link, so the page can be asked for again as it is.
        first = await _next_free(rt, c, asked, now)
        span = None if first is None else (first, first + NEXT_FREE_SPAN)
        if span is not None:
            applied += [("start", _instant(span[0])), ("end", _instant(span[1] - timedelta(seconds=1)))]
    found: list[tuple[datetime, int, int]] = []
    for doctor_id, location_id in asked if span is not None else ():
        assert span is not None
        _zone, starts = await grid(rt, doctor_id, location_id, *span)
        found.extend((s, doctor_id, location_id) for s, status in starts if status == SlotStatus.FREE)
    found.sort()
    return {
        "resourceType": "Bundle",
        "type": "searchset",
        "total": len(found),
        "link": [{"relation": "self", "url": f"{base_url}/Appointment/$find?{urlencode(applied)}"}],
        "entry": [
            {"resource": proposed(c, d, loc, s, service, patient), "search": {"mode": "match"}}
            for s, d, loc in found[:count]
        ],
    }
