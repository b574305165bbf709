"""The clinic's directory in FHIR (docs/fhir.md#directory): doctors as Practitioner, locations as Location, each
doctor with work hours at a location as PractitionerRole (the hours as availableTime) and as Schedule
(``<doctor>-<location>``), and patients as Patient. Doctors, locations, roles and schedules are the clinic's
reference data (the cached read the screens use), open to every caller; patients only as ``fhir_access`` says."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir import names as fhir_names
from doctordesk.domain.keyset import Position
from doctordesk.domain.scheduling.suggestions import Hours
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.access import Caller, patients_visible, require_some_scope
from doctordesk.services.fhir.search import Checked, Search, bundle, check, references
from doctordesk.services.fhir.sorting import Sort, SortKey
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.store.tables import Location, Patient, User

TIMEZONE_EXTENSION = "http://hl7.org/fhir/StructureDefinition/timezone"
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PAIR = re.compile(r"([1-9][0-9]{0,15})-([1-9][0-9]{0,15})", re.ASCII)


def pair_id(raw: str) -> tuple[int, int] | None:
    """``<doctor>-<location>`` (PractitionerRole and Schedule ids)."""
    match = _PAIR.fullmatch(raw)
    return (int(match[1]), int(match[2])) if match else None


def _page(
    search: Search, checked: Checked, ids: Sequence[Any], to_resource: Callable[[Any], dict[str, Any]]
) -> dict[str, Any]:
    """A page of a small, id-ordered list (reference data), keyset by id."""
    after = checked.after.id if checked.after is not None else 0
    rows = [r for r in ids if _key(r) > after][: checked.count + 1]
    return bundle(search, checked, rows, to_resource=to_resource, position=lambda r: Position(_EPOCH, _key(r)))


def _key(row: Any) -> int:
    return int(row[0] * 10**9 + row[1]) if isinstance(row, tuple) else int(row)


# --- Practitioner -------------------------------------------------------------------------------------------


def practitioner(clinic: Clinic, doctor_id: int, external_id: str | None = None) -> dict[str, Any]:
    return practitioner_named(doctor_id, clinic.directory.doctors[doctor_id], external_id)


def practitioner_named(doctor_id: int, name: str, external_id: str | None = None) -> dict[str, Any]:
    """A doctor as a Practitioner, from their id, display name and the clinic's own id for them."""
    body: dict[str, Any] = {"resourceType": "Practitioner", "id": str(doctor_id)}
    if external_id:
        body["identifier"] = [{"system": fhir_mapping.PRACTITIONER_IDENTIFIER_SYSTEM, "value": external_id}]
    body["active"] = True
    body["name"] = [fhir_names.human_name(name)]
    return body


async def doctor_identifiers(session: AsyncSession, doctor_ids: Collection[int]) -> dict[int, str]:
    """The clinic's own ids of these doctors (their users' external ids), where they have one."""
    if not doctor_ids:
        return {}
    query = select(User.id, User.external_id).where(User.id.in_(sorted(doctor_ids)), User.external_id.is_not(None))
    return {row_id: str(ext) for row_id, ext in (await session.execute(query)).all()}


async def _clinic(rt: Runtime, caller: Caller) -> Clinic:
    require_some_scope(caller)
    async with rt.db.read() as session:
        return await cached_clinic(rt, session)


async def read_practitioner(rt: Runtime, caller: Caller, doctor_id: int) -> dict[str, Any]:
    require_some_scope(caller)
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
        if doctor_id not in c.directory.doctors:
            raise NotFound(N_("Practitioner not found."))
        identifiers = await doctor_identifiers(session, [doctor_id])
    return practitioner(c, doctor_id, identifiers.get(doctor_id))


# --- Location -----------------------------------------------------------------------------------------------


def location(loc: Location) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceType": "Location",
        "id": str(loc.id),
        "extension": [{"url": TIMEZONE_EXTENSION, "valueCode": loc.timezone}],
        "status": "active",
        "name": loc.name,
        "mode": "instance",
    }
    if loc.address:
        body["address"] = {"text": loc.address}
    return body


async def _locations(rt: Runtime, caller: Caller) -> list[Location]:
    require_some_scope(caller)
    async with rt.db.read() as session:
        return list((await session.scalars(select(Location).order_by(Location.id))).all())


async def read_location(rt: Runtime, caller: Caller, location_id: int) -> dict[str, Any]:
    for loc in await _locations(rt, caller):
        if loc.id == location_id:
            return location(loc)
    raise NotFound(N_("Location not found."))


LOCATION_PARAMETERS = ("_id", "name")
LOCATION_MODIFIERS = {"name": ("exact",)}
LOCATION_SORTS = ("_id", "name")


def location_matches(checked: Checked, places: Sequence[Location]) -> list[int]:
    """The locations that match a Location search's ``_id`` and ``name`` (each word of a value begins a word of
    the name, ignoring case and accents; ``:exact`` the whole name), repeated parameters ANDed, commas ORed."""

    def keeps(loc: Location) -> bool:
        for raw in checked.get("_id"):
            if loc.id not in [fhir_mapping.parse_logical_id(v) for v in raw.split(",") if v]:
                return False
        for name, exact in (("name", False), ("name:exact", True)):
            for raw in checked.get(name):
                if not any(fhir_names.part_matches(loc.name, "name", v, exact=exact) for v in raw.split(",") if v):
                    return False
        return True

    return [loc.id for loc in places if keeps(loc)]


def location_values(sort: Sort, loc: Location) -> tuple[Any, ...]:
    """A location's values under ``sort`` (``name`` ignoring case), then its id."""
    own = {"_id": loc.id, "name": loc.name.casefold()}
    return (*(own[k.name] for k in sort), loc.id)


async def search_locations(rt: Runtime, caller: Caller, search: Search) -> dict[str, Any]:
    """The clinic's locations (a handful), by ``_id`` and ``name``, sorted in memory (``_id`` or ``name``)."""
    checked = check(
        search, LOCATION_PARAMETERS, sorts=LOCATION_SORTS, default_sort=(SortKey("_id"),), modifiers=LOCATION_MODIFIERS
    )
    rows = {loc.id: loc for loc in await _locations(rt, caller)}
    matches = location_matches(checked, list(rows.values()))
    limit = 0 if checked.only_count else checked.count + 1

    def values(i: int) -> tuple[Any, ...]:
        return location_values(checked.sort, rows[i])

    page = sorting.page_in_memory(checked.sort, matches, values, checked.sort_after, limit)
    return bundle(
        search,
        checked,
        page,
        to_resource=lambda i: location(rows[i]),
        position=lambda i: sorting.encode_cursor(checked.sort, values(i)),
    )


# --- PractitionerRole and Schedule --------------------------------------------------------------------------


def available_times(hours: Sequence[Hours]) -> list[dict[str, Any]]:
    """Work hours as availableTime: the weekdays that share opening and closing times, together."""
    grouped: dict[tuple[Any, Any], list[int]] = {}
    for h in sorted(hours, key=lambda h: (h.opens, h.closes, h.weekday)):
        grouped.setdefault((h.opens, h.closes), []).append(h.weekday)
    return [
        {
            "daysOfWeek": [DAYS[d] for d in sorted(set(days))],
            "availableStartTime": opens.strftime("%H:%M:%S"),
            "availableEndTime": closes.strftime("%H:%M:%S"),
        }
        for (opens, closes), days in grouped.items()
    ]


def role(clinic: Clinic, doctor_id: int, location_id: int) -> dict[str, Any]:
    return {
        "resourceType": "PractitionerRole",
        "id": f"{doctor_id}-{location_id}",
        "active": True,
        "practitioner": fhir_mapping.reference("Practitioner", doctor_id, clinic.directory.doctors[doctor_id]),
        "location": [fhir_mapping.reference("Location", location_id, clinic.location_names.get(location_id))],
        "availableTime": available_times(clinic.work_hours[(doctor_id, location_id)]),
    }


def schedule(clinic: Clinic, doctor_id: int, location_id: int) -> dict[str, Any]:
    return {
        "resourceType": "Schedule",
        "id": f"{doctor_id}-{location_id}",
        "active": True,
        "actor": [
            fhir_mapping.reference("Practitioner", doctor_id, clinic.directory.doctors[doctor_id]),
            fhir_mapping.reference("Location", location_id, clinic.location_names.get(location_id)),
        ],
        "comment": "Free times: search Slot with schedule=Schedule/" + f"{doctor_id}-{location_id}",
    }


def places(clinic: Clinic) -> list[tuple[int, int]]:
    """Each (doctor, location) where an active doctor has work hours, in id order."""
    return sorted(p for p in clinic.work_hours if p[0] in clinic.directory.doctors and p[1] in clinic.location_names)


async def read_pair(rt: Runtime, caller: Caller, raw: str, kind: str) -> dict[str, Any]:
    c = await _clinic(rt, caller)
    pair = pair_id(raw)
    if pair is None or pair not in places(c):
        raise NotFound(Text("{kind} not found.", kind=kind))
    return (role if kind == "PractitionerRole" else schedule)(c, *pair)


async def search_pairs(rt: Runtime, caller: Caller, search: Search, kind: str) -> dict[str, Any]:
    """PractitionerRole by ``practitioner`` and ``location``; Schedule by ``actor`` (a Practitioner or
    Location)."""
    known = ("practitioner", "location") if kind == "PractitionerRole" else ("actor",)
    checked = check(search, known)
    c = await _clinic(rt, caller)
    rows = places(c)
    if kind == "PractitionerRole":
        doctors = references(checked, "practitioner", "Practitioner")
        where = references(checked, "location", "Location")
        rows = [p for p in rows if (doctors is None or p[0] in doctors) and (where is None or p[1] in where)]
    else:
        for raw in checked.params.get("actor", []):
            wanted = set(fhir_mapping.token_list([raw]))
            rows = [p for p in rows if f"Practitioner/{p[0]}" in wanted or f"Location/{p[1]}" in wanted]
    build = role if kind == "PractitionerRole" else schedule
    return _page(search, checked, rows, lambda p: build(c, *p))


# --- Patient ------------------------------------------------------------------------------------------------


def patient(patient: Patient) -> dict[str, Any]:
    body: dict[str, Any] = {"resourceType": "Patient", "id": str(patient.id)}
    if patient.external_id:
        body["identifier"] = [{"system": fhir_mapping.PATIENT_IDENTIFIER_SYSTEM, "value": patient.external_id}]
    body["active"] = True
    body["name"] = [fhir_names.human_name(patient.name)]
    if patient.email:
        # Where the clinic's mail reaches the patient (docs/notifications.md), under the same rights as the name.
        body["telecom"] = [{"system": "email", "value": patient.email, "use": "home"}]
    if patient.birth_date is not None:
        body["birthDate"] = patient.birth_date.isoformat()
    return body


async def read_patient(rt: Runtime, caller: Caller, patient_id: int) -> dict[str, Any]:
    async with rt.db.read() as session:
        found = await session.scalar(patients_visible(select(Patient).where(Patient.id == patient_id), caller))
    if found is None:
        raise NotFound(N_("Patient not found."))
    return patient(found)
