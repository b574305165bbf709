"""vread and instance ``_history`` of Appointments (docs/fhir.md#versions): every version the interface gave out
(``meta.versionId``, the ETag, the ``Location`` of a create) reads again at ``Appointment/<id>/_history/<n>``,
as it was; ``Appointment/<id>/_history`` lists the kept versions, newest first. The rights are the read's: an
appointment the caller may not see now is 404 in every version."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir.access import Caller
from doctordesk.store.appointment_versions import appointment_from
from doctordesk.store.fhir_tables import AppointmentVersion
from doctordesk.store.tables import Location, Patient, User

# Instance history takes no parameters but the format (an appointment has a few dozen versions at most).
HISTORY_PARAMETERS = frozenset({"_format"})


async def _as_it_was(session: AsyncSession, appointment_id: int, state: dict[str, Any]) -> dict[str, Any]:
    """The Appointment at a kept version, with the current names of its doctor, place and patient."""
    a = appointment_from(appointment_id, state)
    doctor = await session.scalar(select(User.display_name).where(User.id == a.doctor_id))
    place = await session.get(Location, a.location_id)
    patient = await session.scalar(select(Patient.name).where(Patient.id == a.patient_id))
    return await fhir_appointments.resource_of(session, (a, doctor, place, patient))


async def vread(rt: Runtime, caller: Caller, appointment_id: int, version: int) -> dict[str, Any]:
    """The Appointment at ``version``: the current one from the appointment, an earlier one as kept."""
    async with rt.db.read() as session:
        row = await fhir_appointments.read_row(session, caller, appointment_id)
        if row[0].version == version:
            return await fhir_appointments.resource_of(session, row)
        kept = await session.get(AppointmentVersion, (appointment_id, version))
        if kept is None or version > row[0].version:
            raise NotFound(N_("This version of the appointment is not kept."))
        return await _as_it_was(session, appointment_id, kept.state)


async def history(rt: Runtime, caller: Caller, appointment_id: int, base_url: str, params: list[str]) -> dict[str, Any]:
    """A history Bundle of the appointment's kept versions, newest first (the current one always)."""
    unknown = sorted(set(params) - HISTORY_PARAMETERS)
    if unknown:
        raise NotSupported(fields=dict.fromkeys(unknown, N_("History takes no parameters here.")))
    async with rt.db.read() as session:
        row = await fhir_appointments.read_row(session, caller, appointment_id)
        current = row[0].version
        kept = (
            await session.scalars(
                select(AppointmentVersion)
                .where(AppointmentVersion.appointment_id == appointment_id, AppointmentVersion.version < current)
                .order_by(AppointmentVersion.version.desc())
            )
        ).all()
        resources = [await fhir_appointments.resource_of(session, row)]
        for version in kept:
            resources.append(await _as_it_was(session, appointment_id, version.state))
    url = f"{base_url}/Appointment/{appointment_id}"
    entries = []
    for resource in resources:
        version_id = resource["meta"]["versionId"]
        first = version_id == "1"
        entries.append(
            {
                "fullUrl": url,
                "resource": resource,
                "request": {
                    "method": "POST" if first else "PUT",
                    "url": f"Appointment{'' if first else '/' + resource['id']}",
                },
                "response": {
                    "status": "201 Created" if first else "200 OK",
                    "etag": f'W/"{version_id}"',
                    "lastModified": resource["meta"]["lastUpdated"],
                },
            }
        )
    return {
        "resourceType": "Bundle",
        "type": "history",
        "total": len(entries),
        "link": [{"relation": "self", "url": f"{url}/_history"}],
        "entry": entries,
    }


def version_id(raw: str) -> int:
    """A version id as the ETag gives it (digits); NotFound otherwise."""
    number = fhir_mapping.parse_logical_id(raw)
    if number is None:
        raise NotFound(N_("This version of the appointment is not kept."))
    return number
