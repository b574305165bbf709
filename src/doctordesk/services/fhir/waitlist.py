"""Waitlist entries as FHIR ``Appointment`` resources with status ``waitlist`` (docs/fhir.md, docs/waitlist.md): read
by their own logical id, ``Appointment/waitlist-{entry id}``, under the access rules of appointments — a patient
their own, a doctor the entries that name them, support and admins every one, an API key with
``appointments:read`` every one; anything else is 404, as an unknown id. A search of Appointment lists the waiting
entries when it asks for ``status=waitlist`` alone (``search``), under the same rules; any other search lists
appointments only, so its keyset paging stays over one table."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, false, or_, select

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.integration import Scope
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.domain.waitlist.rules import EntryState
from doctordesk.runtime import Runtime
from doctordesk.services.fhir.access import Caller, require_some_scope
from doctordesk.services.fhir.filters import reference_conditions
from doctordesk.services.fhir.search import Search, bundle, check
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
            "actor": fhir_mapping.reference("Patient", entry.patient_id, patient_name),
            "required": "required",
            "status": "accepted",
        },
    ]
    if entry.doctor_id is not None:
        participants.append(
            {
                "actor": fhir_mapping.reference("Practitioner", entry.doctor_id, doctor),
                "required": "required",
                "status": "needs-action",
            }
        )
    participants.append(
        {
            "actor": fhir_mapping.reference("Location", entry.location_id, place),
            "required": "required",
            "status": "needs-action",
        }
    )
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "id": f"{PREFIX}{entry.id}",
        "meta": {"versionId": str(version), "lastUpdated": fhir_mapping.instant(entry.ended_at or entry.created_at)},
        "status": status,
        "serviceType": [
            {"coding": [{"system": fhir_mapping.SERVICE_SYSTEM, "code": entry.service}], "text": entry.service}
        ],
        "created": fhir_mapping.instant(entry.created_at),
        "requestedPeriod": [{"start": fhir_mapping.local_instant(entry.created_at, zone), "end": last.isoformat()}],
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


# What a search of waitlist entries knows (docs/fhir.md#waitlist-entries): ``date`` is not among them, an entry has
# no start; any other parameter is ignored with a warning (refused with ``Prefer: handling=strict``).
SEARCH_PARAMETERS = ("status", "patient", "practitioner", "location")


def asks_for_waitlist(request: Search) -> bool:
    """True when an Appointment search asks for ``status=waitlist`` alone (every value of ``status`` is
    ``waitlist``, no ``status:not``): it lists waitlist entries, never appointments."""
    values = [v for k, v in request.items if k == "status"]
    modified = any(k.startswith("status:") for k, _ in request.items)
    return bool(values) and not modified and all(fhir_mapping.token_list([v]) == ["waitlist"] for v in values)


def _visible(query: Any, caller: Caller) -> Any:
    """The entries ``caller`` may read, as the read's rule (``_may_see``) in SQL."""
    if not isinstance(caller, Actor):
        require_some_scope(caller)
        return query if caller.has(Scope.APPOINTMENTS_READ) else query.where(false())
    if caller.patient_context is not None:
        query = query.where(WaitlistEntry.patient_id == caller.patient_context)
    if caller.role is Role.PATIENT:
        return query.where(WaitlistEntry.patient_id == (caller.patient_id or -1))
    if caller.role is Role.DOCTOR:
        return query.where(WaitlistEntry.doctor_id == caller.user_id)
    return query


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The waiting entries as Appointments with status ``waitlist``, in order of waiting (joined, then id), keyset
    paged: ``next`` continues after the page's last entry, so entries joining meanwhile neither repeat nor shift."""
    checked = check(request, SEARCH_PARAMETERS)
    where = [WaitlistEntry.state == EntryState.WAITING]
    for name, kind, column in (
        ("patient", "Patient", WaitlistEntry.patient_id),
        ("practitioner", "Practitioner", WaitlistEntry.doctor_id),
        ("location", "Location", WaitlistEntry.location_id),
    ):
        where.extend(reference_conditions(checked, name, kind, column))
    if checked.after is not None:
        at, last = checked.after.at, checked.after.id
        where.append(or_(WaitlistEntry.created_at > at, and_(WaitlistEntry.created_at == at, WaitlistEntry.id > last)))
    query = (
        _visible(select(WaitlistEntry, Patient.name).join(Patient, Patient.id == WaitlistEntry.patient_id), caller)
        .where(*where)
        .order_by(WaitlistEntry.created_at, WaitlistEntry.id)
        .limit(checked.count + 1)
    )
    async with rt.db.read() as session:
        rows = [] if checked.only_count else list((await session.execute(query)).all())
        c = await cached_clinic(rt, session)
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda r: resource(
            r[0],
            r[1],
            doctor=c.directory.doctors.get(r[0].doctor_id or 0),
            place=c.location_names.get(r[0].location_id, ""),
            timezone=c.directory.locations.get(r[0].location_id, "UTC"),
            version=1,
        ),
        position=lambda r: Position(r[0].created_at, r[0].id),
    )
