"""What an export reads, one page at a time: every exported type's rows after an id, in id order (a keyset read:
a row inserted or changed meanwhile never makes another repeat or be skipped), as FHIR resources. Appointments
changed after the job's transaction time are left for the next ``_since`` export; with ``_since`` only those
changed after it are read (docs/fhir.md#bulk-export)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.fhir.bulk import Level
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir.bulk import groups
from doctordesk.store.tables import Appointment, Location, Patient, User

Resource = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Scope:
    """What one job covers: its level, the doctor of a Group export, ``since`` and the transaction time."""

    level: Level
    group_id: int | None
    since: datetime | None
    until: datetime


Page = Callable[[AsyncSession, Scope, int, int], Awaitable[list[tuple[int, Resource]]]]


async def _patients(session: AsyncSession, scope: Scope, after: int, limit: int) -> list[tuple[int, Resource]]:
    query = select(Patient).where(Patient.id > after).order_by(Patient.id).limit(limit)
    if scope.group_id is not None:
        query = query.where(groups.in_panel(scope.group_id))
    return [(p.id, fhir_directory.patient(p)) for p in (await session.scalars(query)).all()]


async def _appointments(session: AsyncSession, scope: Scope, after: int, limit: int) -> list[tuple[int, Resource]]:
    query = base_query().where(Appointment.id > after, Appointment.updated_at <= scope.until)
    if scope.since is not None:
        query = query.where(Appointment.updated_at > scope.since)
    if scope.group_id is not None:
        query = query.where(Appointment.doctor_id == scope.group_id)
    rows = (await session.execute(query.order_by(Appointment.id).limit(limit))).all()
    built = await fhir_appointments.resources(session, rows)
    return [(row[0].id, body) for row, body in zip(rows, built, strict=True)]


async def _practitioners(session: AsyncSession, _scope: Scope, after: int, limit: int) -> list[tuple[int, Resource]]:
    rows = (await session.execute(groups.doctors_query().where(User.id > after).limit(limit))).all()
    return [(i, fhir_directory.practitioner_named(i, name, ext)) for i, name, ext in rows]


async def _locations(session: AsyncSession, _scope: Scope, after: int, limit: int) -> list[tuple[int, Resource]]:
    query = select(Location).where(Location.id > after).order_by(Location.id).limit(limit)
    return [(loc.id, fhir_directory.location(loc)) for loc in (await session.scalars(query)).all()]


async def _groups(session: AsyncSession, _scope: Scope, after: int, _limit: int) -> list[tuple[int, Resource]]:
    # A Group lists its members (a doctor's panel may hold thousands): one Group a page, so the memory a page
    # takes is one panel's, whatever the clinic's size.
    found = await groups.groups_page(session, after=after, limit=1)
    return [(int(g["id"]), g) for g in found]


PAGES: dict[str, Page] = {
    "Patient": _patients,
    "Practitioner": _practitioners,
    "Location": _locations,
    "Appointment": _appointments,
    "Group": _groups,
}
