"""Chained parameters on Appointment (docs/fhir.md#chained-parameters): one level deep on the ``patient``,
``practitioner`` and ``location`` references, with the target's own listed parameters and their modifiers
(``patient.name=schmidt``, ``practitioner.identifier=prac-1``, ``location.name:exact=Berlin``; the typed form
``patient:Patient.name`` reads the same). A chain matches only targets the caller may read: the patients they may
see, and nothing of a type an app's scopes do not allow reading. Anything deeper or unknown is an unknown
parameter (``services/fhir/search.check``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import false, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import people as fhir_people
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.filters import Condition
from doctordesk.services.fhir.search import Checked, Search
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store.tables import Appointment, Location


@dataclass(frozen=True, slots=True)
class Target:
    """A reference a chain follows: the resource type it names, that type's parameters and their modifiers."""

    kind: str
    parameters: Sequence[str]
    modifiers: Mapping[str, Sequence[str]]


TARGETS: dict[str, Target] = {
    "patient": Target("Patient", fhir_people.PATIENT_PARAMETERS, fhir_people.PATIENT_MODIFIERS),
    "practitioner": Target("Practitioner", fhir_people.PRACTITIONER_PARAMETERS, fhir_people.PRACTITIONER_MODIFIERS),
    "location": Target("Location", fhir_directory.LOCATION_PARAMETERS, fhir_directory.LOCATION_MODIFIERS),
}
_COLUMNS = {
    "patient": Appointment.patient_id,
    "practitioner": Appointment.doctor_id,
    "location": Appointment.location_id,
}


def parameters() -> tuple[str, ...]:
    """Every chained parameter Appointment takes (``patient.name``, …)."""
    return tuple(f"{ref}.{name}" for ref, t in TARGETS.items() for name in t.parameters)


def modifiers() -> dict[str, Sequence[str]]:
    """The modifiers each chained parameter takes: its target parameter's."""
    return {f"{ref}.{name}": mods for ref, t in TARGETS.items() for name, mods in t.modifiers.items()}


def chains_of(reference: str) -> list[str]:
    """The chain names listed for a reference parameter (the CapabilityStatement's documentation)."""
    target = TARGETS.get(reference)
    return list(target.parameters) if target else []


def untyped(search: Search) -> Search:
    """``patient:Patient.name`` (R4's typed chain) as ``patient.name``: the reference holds one type here."""
    items = []
    for name, value in search.items:
        ref, colon, rest = name.partition(":")
        target = TARGETS.get(ref)
        if colon and target is not None and rest.startswith(target.kind + "."):
            name = f"{ref}.{rest.removeprefix(target.kind + '.')}"
        items.append((name, value))
    return Search(search.base_url, search.resource_type, items, strict=search.strict)


def _may_read(caller: Caller, kind: str) -> bool:
    ceiling = caller.ceiling if isinstance(caller, Actor) else None
    return ceiling is None or ceiling.may_read(kind)


async def _ids(rt: Runtime, session: AsyncSession, caller: Caller, ref: str, checked: Checked) -> Any:
    """The ids of the ``ref`` targets ``caller`` may read that match ``checked`` (a list, or a subquery)."""
    if ref == "patient":
        return await fhir_people.patient_ids(session, caller, checked)
    if ref == "practitioner":
        c = await cached_clinic(rt, session)
        identifiers = await fhir_directory.doctor_identifiers(session, c.directory.doctors)
        return fhir_people.practitioner_matches(checked, c.directory.doctors, identifiers)
    places = list((await session.scalars(select(Location).order_by(Location.id))).all())  # a handful
    return fhir_directory.location_matches(checked, places)


async def conditions(rt: Runtime, session: AsyncSession, caller: Caller, checked: Checked) -> list[Condition]:
    """Each reference's chained parameters as one condition: the appointment's participant is one of the
    targets that match them all (a single reference: ANDing them per target or per parameter is the same)."""
    out: list[Condition] = []
    for ref, target in TARGETS.items():
        prefix = ref + "."
        own = {name.removeprefix(prefix): values for name, values in checked.params.items() if name.startswith(prefix)}
        if not own:
            continue
        if not _may_read(caller, target.kind):
            out.append(false())  # what the caller may not read, a chain never matches
            continue
        inner = Checked(own)
        inner.now = checked.now
        try:
            ids = await _ids(rt, session, caller, ref, inner)
        except ValidationFailed as error:  # named as sent: the chained parameter
            error.fields = {f"{prefix}{name}": text for name, text in error.fields.items()}
            raise
        out.append(_COLUMNS[ref].in_(ids))
        ceiling = caller.ceiling if isinstance(caller, Actor) else None
        only = ceiling.patient_for(target.kind) if ceiling is not None and ref == "patient" else None
        if only is not None:  # an app reading patients through a patient/ scope: the launch's patient's only
            out.append(_COLUMNS[ref] == only)
    return out
