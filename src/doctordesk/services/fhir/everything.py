"""``GET /fhir/Patient/{id}/$everything`` (docs/fhir.md#everything): the patient, their appointments, the offers
and answers of those appointments, and the doctors and locations they name, as one searchset Bundle paged by the
appointments (``_count``, keyset ``next`` links in start order), narrowed by ``_since`` (appointments changed
since) and ``_type``. Only what the caller could read one by one: the patient as a Patient read (404 otherwise),
the appointments as an Appointment search, and through an app only the types its scopes may read."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.access import Caller, appointments_visible, patients_visible
from doctordesk.services.fhir.responses import responses
from doctordesk.services.fhir.search import Checked, Search, bundle, check, subset
from doctordesk.services.fhir.sorting import SortKey
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store.tables import Appointment, Location, Patient

OPERATION = "everything"
PARAMETERS = ("_since", "_type")
# What a patient's everything holds here, in the order a first page shows them.
TYPES = ("Patient", "Appointment", "AppointmentResponse", "Practitioner", "Location")
_ORDER = (SortKey("date"),)
_COLUMNS = {"date": Appointment.start_at}


def _types(search: Search) -> tuple[Search, set[str], list[str]]:
    """``_type`` (commas and repeats add up): the types asked that this operation holds, and the others. The
    search comes back with ``_type`` holding only the applied ones (its self link)."""
    asked = [t for raw in search.values("_type") for t in raw.split(",") if t]
    if "_type" in dict(search.items) and not asked:
        raise ValidationFailed(fields={"_type": Text("Name resource types: {types}.", types=", ".join(TYPES))})
    wanted = [t for t in dict.fromkeys(asked) if t in TYPES]
    others = [t for t in dict.fromkeys(asked) if t not in TYPES]
    items = [(k, v) for k, v in search.items if k != "_type"]
    if wanted:
        items.append(("_type", ",".join(wanted)))
    shown = set(wanted) if asked else set(TYPES)  # only other types asked: none of these
    return Search(search.base_url, search.resource_type, items, strict=search.strict), shown, others


def _since(checked: Checked) -> Any:
    """``_since``: an instant with its offset (or a day, from its start); the last value counts."""
    values = checked.get("_since")
    if not values:
        return None
    raw = values[-1]
    if not raw[:1].isdigit():
        raise ValidationFailed(fields={"_since": N_("Use an instant, e.g. 2026-11-20T10:00:00Z.")})
    [test] = fhir_mapping.date_tests([raw], name="_since", now=checked.now)
    return test.lo


def _readable(caller: Caller, kinds: set[str]) -> set[str]:
    """The types an app's scopes let it read (all for anyone else); what is reached through the appointments
    needs the appointments readable too."""
    ceiling = caller.ceiling if isinstance(caller, Actor) else None
    if ceiling is None:
        return kinds
    out = {k for k in kinds if ceiling.may_read(k)}
    return out if ceiling.may_read("Appointment") else out & {"Patient"}


async def everything(rt: Runtime, caller: Caller, patient_id: int, request: Search) -> dict[str, Any]:
    """The patient's everything as the caller may read it (docs/fhir.md#everything)."""
    request, kinds, others = _types(request)
    if others and request.strict:
        raise NotSupported(fields={"_type": Text("Supported: {types}.", types=", ".join(TYPES))})
    checked = check(request, PARAMETERS, sorts=(), default_sort=_ORDER)
    checked.now = rt.clock.now()
    for kind in others:
        ignored = Text("The type {name} is not among what $everything answers here and was ignored.", name=repr(kind))
        checked.warnings.append(fhir_mapping.issue("NOT_SUPPORTED", _(ignored), severity="warning", expression="_type"))
    since = _since(checked)
    kinds = _readable(caller, kinds)
    first = checked.sort_after is None
    async with rt.db.read() as session:
        found = await session.scalar(patients_visible(select(Patient).where(Patient.id == patient_id), caller))
        if found is None:
            raise NotFound(N_("Patient not found."))
        own = [Appointment.patient_id == patient_id]
        if since is not None:
            own.append(Appointment.updated_at >= since)
        mine = appointments_visible(base_query(), caller).where(*own)
        rows: list[Any] = []
        if kinds - {"Patient"}:
            page = mine
            if checked.sort_after is not None:
                page = page.where(sorting.beyond(checked.sort, _COLUMNS, Appointment.id, checked.sort_after))
            ordered = page.order_by(*sorting.order_by(checked.sort, _COLUMNS, Appointment.id))
            rows = list((await session.execute(ordered.limit(checked.count + 1))).all())
        built = dict(zip([r[0].id for r in rows], await fhir_appointments.resources(session, rows), strict=True))
        included = []
        if "AppointmentResponse" in kinds:
            included += await responses(session, [r[0] for r in rows[: checked.count]])
        if first:
            pairs = select(Appointment.doctor_id, Appointment.location_id).where(*own).distinct()
            included += await _directory(rt, session, appointments_visible(pairs, caller), kinds)
    result = bundle(
        request,
        checked,
        rows if "Appointment" in kinds else [],
        to_resource=lambda r: built[r[0].id],
        position=lambda r: sorting.encode_cursor(checked.sort, (r[0].start_at, r[0].id)),
        included=included,
    )
    if len(rows) > checked.count and "Appointment" not in kinds:
        _keep_next(result, request, checked, rows)
    if first and "Patient" in kinds and not checked.only_count:
        patient = subset(fhir_directory.patient(found), checked.elements)
        url = f"{request.base_url}/Patient/{patient_id}"
        entry = {"fullUrl": url, "resource": patient, "search": {"mode": "match"}}
        result["entry"] = [entry, *result.get("entry", [])]
    return result


def _keep_next(result: dict[str, Any], request: Search, checked: Checked, rows: list[Any]) -> None:
    """Appointments left out by ``_type`` still drive the pages of their offers and answers."""
    shown = rows[: checked.count]
    cursor = sorting.encode_cursor(checked.sort, (shown[-1][0].start_at, shown[-1][0].id))
    kept = [(k, v) for k, v in request.items if k in checked.params and k not in ("_cursor", "_sort")]
    url = f"{request.base_url}/{request.resource_type}?{urlencode([*kept, ('_cursor', cursor)])}"
    result["link"].append({"relation": "next", "url": url})


async def _directory(rt: Runtime, session: AsyncSession, pairs: Any, kinds: set[str]) -> list[dict[str, Any]]:
    """The doctors and locations of all the patient's appointments the caller sees (a first page's)."""
    found = (await session.execute(pairs)).all()
    out: list[dict[str, Any]] = []
    if "Practitioner" in kinds:
        c = await cached_clinic(rt, session)
        doctors = sorted({d for d, _ in found if d in c.directory.doctors})
        identifiers = await fhir_directory.doctor_identifiers(session, doctors)
        out += [fhir_directory.practitioner(c, d, identifiers.get(d)) for d in doctors]
    if "Location" in kinds:
        places = sorted({loc for _, loc in found})
        rows = (await session.scalars(select(Location).where(Location.id.in_(places)).order_by(Location.id))).all()
        out += [fhir_directory.location(loc) for loc in rows]
    return out
