"""``POST /fhir/Appointment``: an appointment request in FHIR (status ``proposed``), placed by ``place_request``, the
one path of the integration API and the booking screen (same rules, same codes), and conditional on the clinic's
identifier with ``If-None-Exist`` (docs/fhir.md#create)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from doctordesk.domain import moments
from doctordesk.domain.errors import Forbidden, IdempotencyKeyReused, NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported, Unprocessable
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir.access import Caller
from doctordesk.services.lifecycle.placing import MAX_SERVICE_CHARS, RequestInput, place_request, record_origin
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import Appointment

# The elements a request may carry; any other is refused rather than silently dropped.
ACCEPTED = frozenset(
    {
        "resourceType",
        "id",
        "meta",
        "text",
        "identifier",
        "status",
        "serviceType",
        "start",
        "end",
        "minutesDuration",
        "comment",
        "participant",
        "requestedPeriod",
    }
)
MAX_NOTE_CHARS = 2000
# place_request's field names as elements of the Appointment.
_ELEMENT = {
    "patient": "participant[Patient]",
    "doctor": "participant[Practitioner]",
    "location": "participant[Location]",
    "start": "start",
}


@dataclass(frozen=True, slots=True)
class Created:
    resource: dict[str, Any]
    version: int
    created: bool  # False: If-None-Exist matched an existing appointment


def _when(raw: Any, name: str) -> datetime:
    """A dateTime with its offset within the accepted range (``domain/moments.py``), seconds optional."""
    if not isinstance(raw, str) or "T" not in raw:
        raise ValidationFailed(fields={name: N_("Use a dateTime with its offset, e.g. 2026-11-26T11:00:00+01:00.")})
    read = moments.read_instant(raw, seconds=False)
    if isinstance(read, str):
        raise ValidationFailed(fields={name: read})
    return read


def _participants(raw: Any) -> dict[str, int]:
    if not isinstance(raw, list) or not raw:
        raise ValidationFailed(fields={"participant": N_("Name the Patient, the Practitioner and the Location.")})
    found: dict[str, int] = {}
    for item in raw:
        actor = item.get("actor") if isinstance(item, dict) else None
        ref = actor.get("reference") if isinstance(actor, dict) else None
        kind = ref.split("/")[0] if isinstance(ref, str) else ""
        row_id = fhir_mapping.reference_id(ref, kind) if isinstance(ref, str) and kind else None
        if kind not in ("Patient", "Practitioner", "Location") or row_id is None or kind in found:
            raise ValidationFailed(
                fields={"participant": N_("One Patient/<id>, one Practitioner/<id> and one Location/<id>.")}
            )
        found[kind] = row_id
    if len(found) != 3:
        raise ValidationFailed(
            fields={"participant": N_("One Patient/<id>, one Practitioner/<id> and one Location/<id>.")}
        )
    return found


def _service(raw: Any) -> str:
    if raw is None:
        return "consultation"
    first = raw[0] if isinstance(raw, list) and raw and isinstance(raw[0], dict) else None
    codings = first.get("coding") if first else None
    value = first.get("text") if first else None
    if value is None and isinstance(codings, list) and codings and isinstance(codings[0], dict):
        value = codings[0].get("code")
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= MAX_SERVICE_CHARS:
        raise ValidationFailed(
            fields={
                "serviceType": Text(
                    "One serviceType with a text of 1 to {max_service_chars}.", max_service_chars=MAX_SERVICE_CHARS
                )
            }
        )
    problem = name_problem(value, max_chars=MAX_SERVICE_CHARS)  # a service is a name (domain/names.py)
    if problem is not None:
        raise ValidationFailed(fields={"serviceType": problem})
    return value.strip()


def _identifier(raw: Any) -> str | None:
    if raw is None:
        return None
    item = raw[0] if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], dict) else None
    value = item.get("value") if item else None
    if (
        item is None
        or item.get("system") != fhir_mapping.IDENTIFIER_SYSTEM
        or not isinstance(value, str)
        or not 0 < len(value) <= fhir_mapping.MAX_IDENTIFIER_CHARS
        or not value.isprintable()
    ):
        raise ValidationFailed(
            fields={
                "identifier": Text(
                    "One identifier of system {identifier_system}.", identifier_system=fhir_mapping.IDENTIFIER_SYSTEM
                )
            }
        )
    return value


def parse(body: dict[str, Any]) -> tuple[RequestInput, str | None]:
    """The request an Appointment resource asks for, and its clinic identifier; ValidationFailed (400) naming
    the element for anything this interface does not accept."""
    extra = sorted(set(body) - ACCEPTED)
    if extra:
        raise ValidationFailed(fields=dict.fromkeys(extra, N_("Not accepted in an appointment request here.")))
    if body.get("status") != "proposed":
        raise ValidationFailed(fields={"status": N_("A new appointment is a request: status proposed.")})
    start = _when(body.get("start"), "start")
    if start.second or start.microsecond:
        raise ValidationFailed(fields={"start": N_("Use a time in whole minutes (seconds 00).")})
    minutes = body.get("minutesDuration")
    if "end" in body:
        span = (_when(body["end"], "end") - start) / timedelta(minutes=1)
        if minutes is not None and minutes != span:
            raise ValidationFailed(fields={"end": N_("Must be start plus minutesDuration.")})
        minutes = int(span) if span == int(span) else -1
    minutes = 30 if minutes is None else minutes
    if not isinstance(minutes, int) or isinstance(minutes, bool) or not 5 <= minutes <= 480:
        raise ValidationFailed(fields={"minutesDuration": N_("From 5 to 480 minutes.")})
    note = body.get("comment", "")
    if isinstance(note, str):
        problem = text_problem(note, max_chars=MAX_NOTE_CHARS, multiline=True)
    else:
        problem = N_("Must be text.")
    if problem:
        raise ValidationFailed(fields={"comment": problem})
    who = _participants(body.get("participant"))
    req = RequestInput(
        patient_id=who["Patient"],
        doctor_id=who["Practitioner"],
        location_id=who["Location"],
        service=_service(body.get("serviceType")),
        start=start,
        duration_minutes=minutes,
        note=note.strip(),
    )
    return req, _identifier(body.get("identifier"))


def condition(raw: str | None) -> str | None:
    """The identifier ``If-None-Exist`` asks about (``identifier=[system|]value``)."""
    if raw is None:
        return None
    name, _, value = raw.partition("=")
    system, _, code = value.rpartition("|")
    if name != "identifier" or (system and system != fhir_mapping.IDENTIFIER_SYSTEM) or not code or "&" in value:
        raise NotSupported(
            fields={
                "If-None-Exist": Text(
                    "Use identifier={identifier_system}|<id>.", identifier_system=fhir_mapping.IDENTIFIER_SYSTEM
                )
            }
        )
    if len(code) > fhir_mapping.MAX_IDENTIFIER_CHARS:
        raise ValidationFailed(
            fields={
                "If-None-Exist": Text(
                    "At most {max_identifier_chars} characters.", max_identifier_chars=fhir_mapping.MAX_IDENTIFIER_CHARS
                )
            }
        )
    return code


def authorize(caller: Caller) -> None:
    """Whether ``caller`` may request appointments at all (403 otherwise), decided before the body is read: a
    caller who may not create learns nothing from how their body is judged."""
    if isinstance(caller, Integration):
        if not caller.has(Scope.APPOINTMENTS_WRITE):
            raise Forbidden(N_("This API key lacks the scope appointments:write."))
        return
    if caller.role is not Role.PATIENT:
        raise Forbidden(N_("Appointment requests come from patients and the clinic's systems."))


def _check_caller(caller: Caller, req: RequestInput) -> None:
    authorize(caller)
    if isinstance(caller, Actor) and req.patient_id != caller.patient_id:
        raise NotFound(N_("Patient not found."))


async def _existing(rt: Runtime, caller: Caller, external_id: str) -> Created | None:
    async with rt.db.read() as session:
        found = await session.scalar(select(Appointment.id).where(Appointment.external_id == external_id))
        if found is None:
            return None
        try:
            row = await fhir_appointments.read_row(session, caller, found)
        except NotFound:
            raise IdempotencyKeyReused(N_("This identifier belongs to another appointment.")) from None
        body = await fhir_appointments.resource_of(session, row)
    return Created(body, row[0].version, created=False)


async def _place(rt: Runtime, caller: Caller, req: RequestInput, external_id: str | None) -> int:
    now = rt.clock.now()
    try:
        async with unit_of_work(rt) as uow:
            a = (await place_request(rt, uow, caller, req, now=now, external_id=external_id)).appointment
            if isinstance(caller, Integration):
                await record_origin(uow.session, caller, a, note=req.note, now=now)
            return a.id
    except ValidationFailed as refused:
        fields = {_ELEMENT.get(k, k): v for k, v in refused.fields.items()}
        raise Unprocessable(refused.message, fields=fields) from None


async def create(rt: Runtime, caller: Caller | Actor, body: dict[str, Any], *, if_none_exist: str | None) -> Created:
    """Create the request, or, with ``If-None-Exist``, answer the appointment that already has the identifier."""
    authorize(caller)
    req, external_id = parse(body)
    wanted = condition(if_none_exist)
    if wanted is not None and external_id is not None and wanted != external_id:
        raise ValidationFailed(fields={"identifier": N_("Must be the identifier If-None-Exist names.")})
    _check_caller(caller, req)
    external_id = external_id or wanted
    if external_id is not None:
        existing = await _existing(rt, caller, external_id)
        if existing is not None:
            if wanted is None:
                raise IdempotencyKeyReused(N_("This identifier belongs to another appointment."))
            return existing
    try:
        appointment_id = await _place(rt, caller, req, external_id)
    except IntegrityError:
        if external_id is None:
            raise
        # Another request with this identifier committed first.
        existing = await _existing(rt, caller, external_id)
        if existing is None or wanted is None:
            raise IdempotencyKeyReused(N_("This identifier belongs to another appointment.")) from None
        return existing
    async with rt.db.read() as session:
        row = await fhir_appointments.read_row(session, caller, appointment_id)
        body = await fhir_appointments.resource_of(session, row)
    return Created(body, row[0].version, created=True)
