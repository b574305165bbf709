"""Appointments as FHIR R4 Appointment resources: read one, search by date range, status and participants
(docs/fhir.md#appointment). The rights are the caller's (``fhir_access``); the rows and their order are the read
API's (``services.appointments.reading``), paged by keyset on (start, id)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.keyset import Position
from doctordesk.runtime import Runtime
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir.access import Caller, appointments_visible
from doctordesk.services.fhir.search import Search, bundle, check, references
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store import keyset
from doctordesk.store.tables import Appointment, Patient

SEARCH_PARAMETERS = ("date", "status", "practitioner", "patient", "location", "identifier")
# _include targets: the participants of the page's appointments (one query or the cached directory each).
INCLUDES = ("Appointment:patient", "Appointment:practitioner", "Appointment:location")
SORTS = {"date": False, "-date": True}


def _participant(actor: dict[str, Any], status: str) -> dict[str, Any]:
    return {"actor": actor, "required": "required", "status": status}


def resource(row: Any) -> dict[str, Any]:
    """One appointment row (appointment, doctor's name, location, patient's name) as an Appointment."""
    a, doctor_name, loc, patient_name = row
    status = Status(a.status)
    fhir_status = fhir.APPOINTMENT_STATUS[status]
    zone = ZoneInfo(loc.timezone)
    end = a.start_at + timedelta(minutes=a.duration_minutes)
    patient_status, doctor_status = fhir.PARTICIPANT_STATUS[fhir_status]
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "id": str(a.id),
        "meta": {"versionId": str(a.version), "lastUpdated": fhir.instant(a.updated_at)},
    }
    if a.external_id:
        body["identifier"] = [{"system": fhir.IDENTIFIER_SYSTEM, "value": a.external_id}]
    body["status"] = fhir_status
    reason = fhir.cancelation_reason(status, a.decline_reason)
    if reason is not None:
        body["cancelationReason"] = reason
    body["serviceType"] = [{"text": a.service}]
    body["start"] = fhir.local_instant(a.start_at, zone)
    body["end"] = fhir.local_instant(end, zone)
    body["minutesDuration"] = a.duration_minutes
    body["created"] = fhir.instant(a.created_at)
    if a.request_note:
        body["comment"] = a.request_note
    if fhir_status == "proposed":
        body["requestedPeriod"] = [{"start": body["start"], "end": body["end"]}]
    body["participant"] = [
        {
            "actor": fhir.reference("Patient", a.patient_id, patient_name),
            "required": "required",
            "status": patient_status,
        },
        {
            "actor": fhir.reference("Practitioner", a.doctor_id, doctor_name),
            "required": "required",
            "status": doctor_status,
        },
        {"actor": fhir.reference("Location", loc.id, loc.name), "required": "required", "status": "accepted"},
    ]
    return body


async def read_row(session: AsyncSession, caller: Caller, appointment_id: int) -> Any:
    """The appointment's row if ``caller`` may see it; NotFound otherwise (unknown and not theirs alike)."""
    query = appointments_visible(base_query().where(Appointment.id == appointment_id), caller)
    row = (await session.execute(query)).first()
    if row is None:
        raise NotFound("Appointment not found.")
    return row


async def read(rt: Runtime, caller: Caller, appointment_id: int) -> tuple[dict[str, Any], int]:
    """The Appointment and its version (the ETag)."""
    async with rt.db.read() as session:
        row = await read_row(session, caller, appointment_id)
    return resource(row), row[0].version


def _statuses(values: list[str]) -> list[int]:
    codes: list[int] = []
    for value in fhir.token_list(values):
        if value not in fhir.APPOINTMENT_STATUSES:
            raise ValidationFailed(fields={"status": "Use an Appointment status (proposed, pending, booked, ...)."})
        codes.extend(fhir.statuses_for(value))
    return codes


def _identifier(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in fhir.token_list(values):
        system, _, code = value.rpartition("|")
        if (system and system != fhir.IDENTIFIER_SYSTEM) or not code or len(code) > fhir.MAX_IDENTIFIER_CHARS:
            raise ValidationFailed(fields={"identifier": f"Use {fhir.IDENTIFIER_SYSTEM}|<id> or <id>."})
        out.append(code)
    return out


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """Appointments by ``date`` (start; ``ge``/``gt``/``le``/``lt``/``eq``), ``status``, ``practitioner``,
    ``patient``, ``location`` and ``identifier``, sorted by start (``_sort=date`` or ``-date``), ``_count`` per
    page; ``next`` continues after the page's last row, so rows inserted meanwhile neither repeat nor shift."""
    checked = check(request, (*SEARCH_PARAMETERS, "_include"), sorts=SORTS)
    includes = set(checked.params.get("_include", []))
    if includes - set(INCLUDES):
        raise NotSupported(fields={"_include": f"Supported: {', '.join(INCLUDES)}."})
    query = appointments_visible(base_query(), caller)
    if "date" in checked.params:
        span = fhir.date_range(checked.params["date"])
        if span.lo is not None:
            query = query.where(Appointment.start_at >= span.lo)
        if span.hi is not None:
            query = query.where(Appointment.start_at < span.hi)
    if "status" in checked.params:
        query = query.where(Appointment.status.in_(_statuses(checked.params["status"])))
    for name, kind, column in (
        ("practitioner", "Practitioner", Appointment.doctor_id),
        ("patient", "Patient", Appointment.patient_id),
        ("location", "Location", Appointment.location_id),
    ):
        ids = references(checked, name, kind)
        if ids is not None:
            query = query.where(column.in_(ids))
    if "identifier" in checked.params:
        query = query.where(Appointment.external_id.in_(_identifier(checked.params["identifier"])))
    if checked.after is not None:
        query = query.where(
            keyset.beyond(Appointment.start_at, Appointment.id, checked.after, descending=checked.descending)
        )
    query = query.order_by(*keyset.ordered(Appointment.start_at, Appointment.id, descending=checked.descending))
    async with rt.db.read() as session:
        rows = (await session.execute(query.limit(checked.count + 1))).all()
        included = await _included(rt, session, rows[: checked.count], includes)
    return bundle(
        request,
        checked,
        rows,
        to_resource=resource,
        position=lambda r: Position(r[0].start_at, r[0].id),
        included=included,
    )


async def _included(
    rt: Runtime, session: AsyncSession, rows: Sequence[Any], includes: set[str]
) -> list[dict[str, Any]]:
    """The page's patients, practitioners and locations, once each (they are visible to whoever sees the
    appointment)."""
    out: list[dict[str, Any]] = []
    if "Appointment:patient" in includes:
        ids = sorted({r[0].patient_id for r in rows})
        patients = (await session.scalars(select(Patient).where(Patient.id.in_(ids)).order_by(Patient.id))).all()
        out.extend(fhir_directory.patient(p) for p in patients)
    if "Appointment:practitioner" in includes:
        c = await cached_clinic(rt, session)
        doctors = sorted({r[0].doctor_id for r in rows})
        out.extend(fhir_directory.practitioner(c, d) for d in doctors if d in c.directory.doctors)
    if "Appointment:location" in includes:
        places = {r[2].id: r[2] for r in rows}
        out.extend(fhir_directory.location(places[i]) for i in sorted(places))
    return out
