"""Doctors' patient panels as FHIR Groups (docs/fhir.md#group): one Group per doctor (its id the doctor's), whose
members are the patients with an appointment with that doctor (any status), by patient id. Read and searched by
``_id``; what ``groups_visible`` allows (a doctor their own panel), else 404 as an unknown id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.keyset import Position
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.services.fhir.access import Caller, require_some_scope
from doctordesk.services.fhir.bulk.access import groups_visible
from doctordesk.services.fhir.search import Search, bundle, check
from doctordesk.store.tables import Appointment, DoctorProfile, Patient, User

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SEARCH_PARAMETERS = ("_id",)


def doctors_query() -> Select[int, str, str | None]:
    """The clinic's doctors (active, with a doctor's profile) by id: their id, name and the clinic's own id."""
    return (
        select(User.id, User.display_name, User.external_id)
        .join(DoctorProfile, DoctorProfile.user_id == User.id)
        .where(User.active.is_(True))
        .order_by(User.id)
    )


def in_panel(doctor_id: int) -> Any:
    """The condition on ``Patient`` rows: the patient has an appointment with ``doctor_id``."""
    return exists(
        select(Appointment.id).where(Appointment.patient_id == Patient.id, Appointment.doctor_id == doctor_id)
    )


async def members(session: AsyncSession, doctor_id: int) -> list[int]:
    query = select(Patient.id).where(in_panel(doctor_id)).order_by(Patient.id)
    return list((await session.scalars(query)).all())


def group(doctor_id: int, name: str, patient_ids: Sequence[int]) -> dict[str, Any]:
    """A doctor's panel as an actual Group of persons, managed by the doctor."""
    return {
        "resourceType": "Group",
        "id": str(doctor_id),
        "active": True,
        "type": "person",
        "actual": True,
        "name": _(Text("Patients of {name}", name=name)),
        "managingEntity": fhir_mapping.reference("Practitioner", doctor_id, name),
        "quantity": len(patient_ids),
        "member": [{"entity": {"reference": f"Patient/{p}"}} for p in patient_ids],
    }


async def groups_page(
    session: AsyncSession, *, after: int, limit: int, only: int | None = None
) -> list[dict[str, Any]]:
    """Up to ``limit`` Groups after doctor id ``after`` (keyset by id), or only doctor ``only``'s."""
    query = doctors_query().where(User.id > after).limit(limit)
    if only is not None:
        query = query.where(User.id == only)
    rows = (await session.execute(query)).all()
    return [group(doctor_id, name, await members(session, doctor_id)) for doctor_id, name, _ext in rows]


def _visible_ids(caller: Caller) -> frozenset[int] | None:
    require_some_scope(caller)
    return groups_visible(caller)


async def find(session: AsyncSession, caller: Caller, group_id: int) -> dict[str, Any]:
    """Doctor ``group_id``'s Group if ``caller`` may see it; NotFound otherwise (unknown and not theirs alike)."""
    visible = _visible_ids(caller)
    if visible is not None and group_id not in visible:
        raise NotFound(N_("Group not found."))
    found = await groups_page(session, after=0, limit=1, only=group_id)
    if not found:
        raise NotFound(N_("Group not found."))
    return found[0]


async def read(rt: Runtime, caller: Caller, group_id: int) -> dict[str, Any]:
    async with rt.db.read() as session:
        return await find(session, caller, group_id)


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The Groups ``caller`` may see, by ``_id`` (commas OR ids), keyset by id."""
    checked = check(request, SEARCH_PARAMETERS)
    visible = _visible_ids(caller)
    after = checked.after.id if checked.after is not None else 0
    query = doctors_query().where(User.id > after)
    if visible is not None:
        query = query.where(User.id.in_(sorted(visible)))
    for value in checked.get("_id"):
        query = query.where(
            User.id.in_([i for i in map(fhir_mapping.parse_logical_id, fhir_mapping.token_list([value])) if i])
        )
    async with rt.db.read() as session:
        rows = (await session.execute(query.limit(checked.count + 1))).all()
        found = [group(d, name, await members(session, d)) for d, name, _ext in rows[: checked.count]]
    by_id = {int(g["id"]): g for g in found}
    return bundle(
        request,
        checked,
        [r[0] for r in rows],
        to_resource=lambda d: by_id[d],
        position=lambda d: Position(_EPOCH, d),
    )
