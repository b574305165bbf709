"""Waitlist entries as FHIR ``Appointment`` resources with status ``waitlist`` (docs/fhir.md, docs/waitlist.md): read
by their own logical id, ``Appointment/waitlist-{entry id}``, under the access rules of appointments — a patient
their own, a doctor the entries that name them, support and admins every one, an API key with
``appointments:read`` every one; anything else is 404, as an unknown id. Searches of Appointment list appointments
only, so the CapabilityStatement keeps its meaning."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir
from doctordesk.domain.integration import Scope
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.domain.waitlist.rules import EntryState
from doctordesk.runtime import Runtime
from doctordesk.services.fhir.access import Caller, require_some_scope
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store.tables import Patient
from doctordesk.store.waitlist.tables import WaitlistEntry

PREFIX = "waitlist-"


def entry_id(raw: str) -> int | None:
    """The entry a logical id ``waitlist-{n}`` names; None for any other id."""
    rest = raw.removeprefix(PREFIX)
    if rest == raw or not rest.isascii() or not rest.isdigit() or len(rest) > 18 or rest.startswith("0"):
        return None
    return int(rest)


def _may_see(caller: Caller, entry: WaitlistEntry) -> bool:
    if not isinstance(caller, Actor):
        require_some_scope(caller)
        return caller.has(Scope.APPOINTMENTS_READ)
    if caller.patient_context is not None and entry.patient_id != caller.patient_context:
        return False
    if caller.role is Role.PATIENT:
        return entry.patient_id == caller.patient_id
    if caller.role is Role.DOCTOR:
        return entry.doctor_id == caller.user_id
    return True


async def read(rt: Runtime, caller: Caller, raw_id: str) -> tuple[dict[str, Any], int]:
    """The entry as an Appointment with status ``waitlist``, and its version (1 while waiting, 2 once ended)."""
    number = entry_id(raw_id)
    async with rt.db.read() as session:
        row = (
            (
                await session.execute(
                    select(WaitlistEntry, Patient.name)
                    .join(Patient, Patient.id == WaitlistEntry.patient_id)
                    .where(WaitlistEntry.id == number)
                )
            ).first()
            if number is not None
            else None
        )
        if row is None or not _may_see(caller, row[0]):
            raise NotFound(N_("Appointment not found."))
        c = await cached_clinic(rt, session)
    entry, patient_name = row
    version = 1 if entry.ended_at is None else 2
    return resource(
        entry,
        patient_name,
        doctor=c.directory.doctors.get(entry.doctor_id or 0),
        place=c.location_names.get(entry.location_id, ""),
        timezone=c.directory.locations.get(entry.location_id, "UTC"),
        version=version,
    ), version


def resource(
    entry: WaitlistEntry, patient_name: str, *, doctor: str | None, place: str, timezone: str, version: int
) -> dict[str, Any]:
    """The Appointment of a waitlist entry: what is waited for (service, doctor or any, place), when the patient
    can come (``requestedPeriod``: from joining to the end of the last day); ``cancelled`` once the entry ended
    (left, or served by a time accepted)."""
    zone = ZoneInfo(timezone)
    last = datetime.combine(entry.until, time(23, 59, 59), tzinfo=zone)
    status = "waitlist" if entry.state == EntryState.WAITING else "cancelled"
    participants = [
        {
            "actor": fhir.reference("Patient", entry.patient_id, patient_name),
            "required": "required",
            "status": "accepted",
        },
    ]
    if entry.doctor_id is not None:
        participants.append(
            {
                "actor": fhir.reference("Practitioner", entry.doctor_id, doctor),
                "required": "required",
                "status": "needs-action",
            }
        )
    participants.append(
        {
            "actor": fhir.reference("Location", entry.location_id, place),
            "required": "required",
            "status": "needs-action",
        }
    )
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "id": f"{PREFIX}{entry.id}",
        "meta": {"versionId": str(version), "lastUpdated": fhir.instant(entry.ended_at or entry.created_at)},
        "status": status,
        "serviceType": [{"coding": [{"system": fhir.SERVICE_SYSTEM, "code": entry.service}], "text": entry.service}],
        "created": fhir.instant(entry.created_at),
        "requestedPeriod": [{"start": fhir.local_instant(entry.created_at, zone), "end": last.isoformat()}],
        "participant": participants,
    }
    if status == "cancelled":
        # Left, or served (the accepted time is an Appointment of its own): the entry asks for nothing any more.
        # FHIR's app-3 lets only proposed, cancelled and waitlist appointments go without start and end.
        reasons = {
            EntryState.SERVED: "a time was accepted from the waitlist",
            EntryState.EXPIRED: "its last day passed",
        }
        body["cancelationReason"] = {"text": reasons.get(EntryState(entry.state), "left the waitlist")}
    return body
