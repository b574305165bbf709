"""Appointments as FHIR R4 Appointment resources: read one, search by date range, status and participants
(docs/fhir.md#appointment). The rights are the caller's (``fhir_access``); the rows and their order are the read
API's (``services.appointments.reading``), paged by keyset on (start, id)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import chains, sorting
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import waitlist as fhir_waitlist
from doctordesk.services.fhir.access import Caller, appointments_visible
from doctordesk.services.fhir.filters import (
    Condition,
    date_conditions,
    missing_condition,
    reference_conditions,
    reference_ids,
    token_conditions,
)
from doctordesk.services.fhir.responses import responses
from doctordesk.services.fhir.search import Checked, Search, bundle, check
from doctordesk.services.fhir.sorting import SortKey
from doctordesk.services.fhir.workflow import OFFER_EXTENSION, Facts, Offer, facts_for
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store.tables import Appointment, Patient

SEARCH_PARAMETERS = (
    "_id", "_lastUpdated", "identifier", "date", "status", "service-type", "actor", "patient", "practitioner",
    "location",
)  # fmt: skip
# The modifiers each parameter takes (docs/fhir.md#search-and-paging).
MODIFIERS = {
    "_lastUpdated": ("missing",),
    "identifier": ("not", "missing"),
    "date": ("missing",),
    "status": ("not", "missing"),
    "service-type": ("not", "missing"),
    "actor": ("missing",),
    "patient": ("missing",),
    "practitioner": ("missing",),
    "location": ("missing",),
}
# _include targets: the participants of the page's appointments (one query or the cached directory each).
INCLUDES = ("Appointment:patient", "Appointment:practitioner", "Appointment:location")
# _revinclude: the offers and answers of the page's appointments (at most four each).
REVINCLUDES = ("AppointmentResponse:appointment",)
# The resource type each inclusion brings (what an app's scopes must allow reading).
_INCLUDED_TYPES = {
    "Appointment:patient": "Patient",
    "Appointment:practitioner": "Practitioner",
    "Appointment:location": "Location",
    "AppointmentResponse:appointment": "AppointmentResponse",
}
# _sort keys (several, ``-`` for descending; the id breaks ties) and the columns they order by.
SORTS = ("_id", "_lastUpdated", "date", "status")
EVERY_STATUS = [int(s) for s in Status]
DEFAULT_SORT = (SortKey("date"),)
# Filters whose matches SQLite's planner cannot count (a range of last changes; statuses, whose rows are far
# from even: most are fulfilled): it walks the sort order instead of their index (``_page``).
SMALL_SET_FILTERS = ("_lastUpdated", "status", "status:not")
SMALL_SET = 500
_STATUS_TEXT = case({s.value: text for s, text in fhir_mapping.APPOINTMENT_STATUS.items()}, value=Appointment.status)
_SORT_COLUMNS = {
    "_id": Appointment.id,
    "_lastUpdated": Appointment.updated_at,
    "date": Appointment.start_at,
    "status": _STATUS_TEXT,
}


def _offer_extension(offer: Offer) -> dict[str, Any]:
    """One open offer of a pending appointment: its time, doctor, place and the AppointmentResponse to answer."""
    zone = ZoneInfo(offer.location.timezone)
    end = offer.start_at + timedelta(minutes=offer.duration_minutes)
    period = {"start": fhir_mapping.local_instant(offer.start_at, zone), "end": fhir_mapping.local_instant(end, zone)}
    return {
        "url": OFFER_EXTENSION,
        "extension": [
            {"url": "period", "valuePeriod": period},
            {
                "url": "practitioner",
                "valueReference": fhir_mapping.reference("Practitioner", offer.doctor_id, offer.doctor_name),
            },
            {
                "url": "location",
                "valueReference": fhir_mapping.reference("Location", offer.location.id, offer.location.name),
            },
            {"url": "response", "valueReference": {"reference": f"AppointmentResponse/offer-{offer.id}"}},
        ],
    }


def resource(row: Any, facts: Facts | None = None) -> dict[str, Any]:
    """One appointment row (appointment, doctor's name, location, patient's name) as an Appointment, with its
    workflow ``facts`` (who ended it and why, open offers; ``fhir_workflow``)."""
    a, doctor_name, loc, patient_name = row
    facts = facts or Facts()
    status = Status(a.status)
    fhir_status = fhir_mapping.APPOINTMENT_STATUS[status]
    zone = ZoneInfo(loc.timezone)
    end = a.start_at + timedelta(minutes=a.duration_minutes)
    patient_status, doctor_status, place_status = fhir_mapping.participant_statuses(status, facts.ended_by)
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "id": str(a.id),
        "meta": {"versionId": str(a.version), "lastUpdated": fhir_mapping.instant(a.updated_at)},
    }
    if facts.offers:
        body["extension"] = [_offer_extension(o) for o in facts.offers]
    if a.external_id:
        body["identifier"] = [{"system": fhir_mapping.IDENTIFIER_SYSTEM, "value": a.external_id}]
    body["status"] = fhir_status
    reason = fhir_mapping.cancelation_reason(status, facts.reason or a.decline_reason, facts.ended_by)
    if reason is not None:
        body["cancelationReason"] = reason
    body["serviceType"] = [{"coding": [{"system": fhir_mapping.SERVICE_SYSTEM, "code": a.service}], "text": a.service}]
    body["start"] = fhir_mapping.local_instant(a.start_at, zone)
    body["end"] = fhir_mapping.local_instant(end, zone)
    body["minutesDuration"] = a.duration_minutes
    body["created"] = fhir_mapping.instant(a.created_at)
    if a.request_note:
        body["comment"] = a.request_note
    if fhir_status in ("proposed", "pending"):
        # The time the patient asked for (in a pending appointment still the row's time; the offers are above).
        body["requestedPeriod"] = [{"start": body["start"], "end": body["end"]}]
    body["participant"] = [
        _participant(fhir_mapping.reference("Patient", a.patient_id, patient_name), patient_status),
        _participant(fhir_mapping.reference("Practitioner", a.doctor_id, doctor_name), doctor_status),
        _participant(fhir_mapping.reference("Location", loc.id, loc.name), place_status),
    ]
    return body


def _participant(actor: dict[str, Any], status: str) -> dict[str, Any]:
    return {"actor": actor, "required": "required", "status": status}


async def resources(session: AsyncSession, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """The Appointments of these rows, with their workflow facts (read for all at once)."""
    facts = await facts_for(session, [r[0] for r in rows])
    return [resource(r, facts.get(r[0].id)) for r in rows]


async def resource_of(session: AsyncSession, row: Any) -> dict[str, Any]:
    return (await resources(session, [row]))[0]


async def read_row(session: AsyncSession, caller: Caller, appointment_id: int) -> Any:
    """The appointment's row if ``caller`` may see it; NotFound otherwise (unknown and not theirs alike)."""
    query = appointments_visible(base_query().where(Appointment.id == appointment_id), caller)
    row = (await session.execute(query)).first()
    if row is None:
        raise NotFound(N_("Appointment not found."))
    return row


async def read(rt: Runtime, caller: Caller, appointment_id: int) -> tuple[dict[str, Any], int]:
    """The Appointment and its version (the ETag)."""
    async with rt.db.read() as session:
        row = await read_row(session, caller, appointment_id)
        body = await resource_of(session, row)
    return body, row[0].version


def _status(value: str) -> list[int]:
    if value not in fhir_mapping.APPOINTMENT_STATUSES:
        raise ValidationFailed(fields={"status": N_("Use an Appointment status (proposed, pending, booked, ...).")})
    return fhir_mapping.statuses_for(value) or [-1]


def _identifier(value: str) -> list[str]:
    system, _, code = value.rpartition("|")
    if (
        (system and system != fhir_mapping.IDENTIFIER_SYSTEM)
        or not code
        or len(code) > fhir_mapping.MAX_IDENTIFIER_CHARS
    ):
        raise ValidationFailed(
            fields={
                "identifier": Text(
                    "Use {identifier_system}|<id> or <id>.", identifier_system=fhir_mapping.IDENTIFIER_SYSTEM
                )
            }
        )
    return [code]


def _service(value: str) -> list[str]:
    system, _, code = value.rpartition("|")
    if (system and system != fhir_mapping.SERVICE_SYSTEM) or not code or len(code) > 64:
        raise ValidationFailed(
            fields={
                "service-type": Text(
                    "Use {service_system}|<service> or <service>.", service_system=fhir_mapping.SERVICE_SYSTEM
                )
            }
        )
    return [code]


def _logical_id(value: str) -> list[int]:
    row_id = fhir_mapping.parse_logical_id(value)
    return [row_id] if row_id is not None else []


_ACTOR_COLUMNS = {
    "Patient": Appointment.patient_id,
    "Practitioner": Appointment.doctor_id,
    "Location": Appointment.location_id,
}


def _actor_conditions(checked: Checked) -> list[Condition]:
    """``actor``: any participant (``Patient/``, ``Practitioner/`` or ``Location/<id>``; commas OR them)."""
    conditions: list[Condition] = []
    for raw in checked.get("actor"):
        pairs = reference_ids(raw, "actor", tuple(_ACTOR_COLUMNS))
        conditions.append(or_(*(_ACTOR_COLUMNS[kind] == row_id for kind, row_id in pairs)))
    return conditions + missing_condition(checked, "actor", None, nullable=False)


def conditions(checked: Checked) -> list[Condition]:
    """Every filter of an Appointment search, as SQL conditions to AND."""
    out = [
        *token_conditions(checked, "_id", Appointment.id, _logical_id, nullable=False),
        *date_conditions(checked, "_lastUpdated", Appointment.updated_at),
        *date_conditions(checked, "date", Appointment.start_at),
        *token_conditions(checked, "status", Appointment.status, _status, nullable=False, every=EVERY_STATUS),
        *token_conditions(checked, "identifier", Appointment.external_id, _identifier),
        *token_conditions(checked, "service-type", Appointment.service, _service, nullable=False),
        *_actor_conditions(checked),
    ]
    for name, kind, column in (
        ("practitioner", "Practitioner", Appointment.doctor_id),
        ("patient", "Patient", Appointment.patient_id),
        ("location", "Location", Appointment.location_id),
    ):
        out.extend(reference_conditions(checked, name, kind, column))
    return out


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """Appointments by every parameter of ``SEARCH_PARAMETERS`` (docs/fhir.md#search-and-paging), sorted by start
    or by ``_sort`` (``SORTS``), ``_count`` per page; ``next`` continues after the page's last row, so rows
    inserted meanwhile neither repeat nor shift. ``_total``/``_summary=count`` count the matches."""
    if fhir_waitlist.asks_for_waitlist(request):
        return await fhir_waitlist.search(rt, caller, request)
    request = chains.untyped(request)
    known = (*SEARCH_PARAMETERS, *chains.parameters(), "_include", "_revinclude")
    modifiers = {**MODIFIERS, **chains.modifiers()}
    checked = check(request, known, sorts=SORTS, default_sort=DEFAULT_SORT, modifiers=modifiers, totals=True)
    checked.now = rt.clock.now()
    includes = set(checked.params.get("_include", []))
    if includes - set(INCLUDES):
        raise NotSupported(fields={"_include": Text("Supported: {values}.", values=", ".join(INCLUDES))})
    revincludes = set(checked.params.get("_revinclude", []))
    if revincludes - set(REVINCLUDES):
        raise NotSupported(fields={"_revinclude": Text("Supported: {values}.", values=", ".join(REVINCLUDES))})
    includes |= revincludes
    async with rt.db.read() as session:
        chained = await chains.conditions(rt, session, caller, checked)
        matching = appointments_visible(select(Appointment.id), caller).where(*conditions(checked), *chained)
        counting = select(func.count()).select_from(matching.subquery())
        total = int(await session.scalar(counting) or 0) if checked.total else None
        rows = [] if checked.only_count else await _page(session, caller, checked, chained)
        included = await _included(rt, session, rows[: checked.count], _readable(caller, includes))
        built = dict(zip([r[0].id for r in rows], await resources(session, rows), strict=True))
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda r: built[r[0].id],
        position=lambda r: sorting.encode_cursor(checked.sort, _sort_values(checked, r[0])),
        included=included,
        total=total,
    )


async def _page(session: AsyncSession, caller: Caller, checked: Checked, chained: Sequence[Condition]) -> list[Any]:
    """The page's rows and one more, in the search's order. On SQLite, a search with a filter its planner cannot
    weigh (``SMALL_SET_FILTERS``) first reads the ids that match, at most ``SMALL_SET`` + 1, in no order (the
    planner then takes the filter's index); when they are that few, the page is read by those ids alone (the same
    read transaction: the same snapshot, so they still match and are the caller's) and sorted, instead of walking
    the whole sort order for the few that match (docs/fhir.md#search-performance)."""
    where = [*conditions(checked), *chained]
    if checked.sort_after is not None:
        where.append(sorting.beyond(checked.sort, _SORT_COLUMNS, Appointment.id, checked.sort_after))
    query = appointments_visible(base_query(), caller).where(*where)
    if session.get_bind().dialect.name == "sqlite" and any(checked.has(name) for name in SMALL_SET_FILTERS):
        probe = appointments_visible(select(Appointment.id), caller).where(*where).limit(SMALL_SET + 1)
        ids = (await session.scalars(probe)).all()
        if len(ids) <= SMALL_SET:  # by id only: with the filters beside, the planner may walk the order again
            query = base_query().where(Appointment.id.in_(ids))
    query = query.order_by(*sorting.order_by(checked.sort, _SORT_COLUMNS, Appointment.id))
    return list((await session.execute(query.limit(checked.count + 1))).all())


def _sort_values(checked: Checked, a: Appointment) -> tuple[Any, ...]:
    """The appointment's values under the search's sort, then its id (a page's cursor)."""
    own = {
        "_id": a.id,
        "_lastUpdated": a.updated_at,
        "date": a.start_at,
        "status": fhir_mapping.APPOINTMENT_STATUS[Status(a.status)],
    }
    return (*(own[k.name] for k in checked.sort), a.id)


def _readable(caller: Caller, includes: set[str]) -> dict[str, int | None]:
    """The asked inclusions an app's token may read, each with the one patient it is narrowed to (None: all the
    caller sees); an inclusion its scopes do not allow reading is left out, not refused (docs/fhir.md#include)."""
    ceiling = caller.ceiling if isinstance(caller, Actor) else None
    out: dict[str, int | None] = {}
    for name in includes:
        kind = _INCLUDED_TYPES[name]
        if ceiling is None:
            out[name] = None
        elif ceiling.may_read(kind):
            out[name] = ceiling.patient_for(kind)
    return out


async def _included(
    rt: Runtime, session: AsyncSession, rows: Sequence[Any], includes: dict[str, int | None]
) -> list[dict[str, Any]]:
    """The page's patients, practitioners and locations, once each (they are visible to whoever sees the
    appointment), and the offers and answers of its appointments; an inclusion narrowed to one patient keeps only
    that patient's."""
    out: list[dict[str, Any]] = []
    if "Appointment:patient" in includes:
        only = includes["Appointment:patient"]
        ids = sorted({r[0].patient_id for r in rows if only is None or r[0].patient_id == only})
        patients = (await session.scalars(select(Patient).where(Patient.id.in_(ids)).order_by(Patient.id))).all()
        out.extend(fhir_directory.patient(p) for p in patients)
    if "Appointment:practitioner" in includes:
        c = await cached_clinic(rt, session)
        doctors = sorted({r[0].doctor_id for r in rows})
        known = [d for d in doctors if d in c.directory.doctors]
        identifiers = await fhir_directory.doctor_identifiers(session, known)
        out.extend(fhir_directory.practitioner(c, d, identifiers.get(d)) for d in known)
    if "AppointmentResponse:appointment" in includes:
        only = includes["AppointmentResponse:appointment"]
        out.extend(await responses(session, [r[0] for r in rows if only is None or r[0].patient_id == only]))
    if "Appointment:location" in includes:
        places = {r[2].id: r[2] for r in rows}
        out.extend(fhir_directory.location(places[i]) for i in sorted(places))
    return out
