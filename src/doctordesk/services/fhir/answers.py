"""Suggested Scheduling in FHIR as AppointmentResponse (docs/fhir.md#appointmentresponse): each alternative the
doctor offered is ``offer-<id>`` (the practitioner proposing a time: ``tentative`` while open), and the patient's
answer is ``answer-<appointment id>`` (``accepted`` with the chosen time, or ``declined``). A patient answers by
creating an AppointmentResponse; it goes through the offers screen's own services (``services.review.offers``)."""

from __future__ import annotations

import re
from datetime import UTC, timedelta
from typing import Any

from sqlalchemy import select

from doctordesk.domain import moments
from doctordesk.domain.errors import AppointmentChanged, Forbidden, NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import Unprocessable, VersionMismatch
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir.access import Caller, appointments_visible
from doctordesk.services.fhir.responses import responses
from doctordesk.services.fhir.search import Search, bundle, check, references
from doctordesk.services.review import offers
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment

COVERAGE_ACKNOWLEDGED = "urn:doctordesk:fhir:coverage-acknowledged"
SEARCH_PARAMETERS = ("appointment", "actor")
MAX_APPOINTMENTS = 50
ACCEPTED = frozenset(
    {
        "resourceType",
        "id",
        "meta",
        "text",
        "extension",
        "appointment",
        "actor",
        "participantStatus",
        "start",
        "end",
        "comment",
    }
)
_ID = re.compile(r"(offer|answer)-([1-9][0-9]{0,15})", re.ASCII)
_ETAG = re.compile(r'(?:W/)?"([0-9]{1,9})"', re.ASCII)


async def read(rt: Runtime, caller: Caller, response_id: str) -> tuple[dict[str, Any], int]:
    """One offer or answer of an appointment the caller may see; 404 otherwise."""
    match = _ID.fullmatch(response_id)
    if match is None:
        raise NotFound(N_("AppointmentResponse not found."))
    kind, number = match[1], int(match[2])
    async with rt.db.read() as session:
        appointment_id = number
        if kind == "offer":
            found = await session.scalar(select(AppointmentOffer.appointment_id).where(AppointmentOffer.id == number))
            appointment_id = found or 0
        try:
            row = await fhir_appointments.read_row(session, caller, appointment_id)
        except NotFound:
            raise NotFound(N_("AppointmentResponse not found.")) from None
        bodies = await responses(session, [row[0]])
    for body in bodies:
        if body["id"] == response_id:
            return body, row[0].version
    raise NotFound(N_("AppointmentResponse not found."))


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The offers and answers of the named appointments (``appointment`` is required: at most 50 at once, each
    with at most three offers and one answer, so one page), narrowed by ``actor``."""
    checked = check(request, SEARCH_PARAMETERS)
    ids = references(checked, "appointment", "Appointment")
    if not ids or len(ids) > MAX_APPOINTMENTS:
        raise ValidationFailed(
            fields={
                "appointment": Text(
                    "Name 1 to {max_appointments} appointments (Appointment/<id>).", max_appointments=MAX_APPOINTMENTS
                )
            }
        )
    actor_sets = [set(fhir_mapping.token_list([raw])) for raw in checked.params.get("actor", [])]
    query = appointments_visible(base_query().where(Appointment.id.in_(ids)), caller).order_by(Appointment.id)
    async with rt.db.read() as session:
        appointments = [r[0] for r in (await session.execute(query)).all()]
        found = await responses(session, appointments)
    for actors in actor_sets:
        found = [r for r in found if r["actor"]["reference"] in actors]
    checked.count = max(len(found), 1)
    return bundle(request, checked, found, to_resource=lambda r: r, position=None)


def if_match_version(raw: str | None) -> int | None:
    if raw is None:
        return None
    match = _ETAG.fullmatch(raw.strip())
    if match is None:
        raise ValidationFailed(fields={"If-Match": N_('Use W/"<version>" as the ETag gave it.')})
    return int(match[1])


def _acknowledged(raw: Any) -> bool:
    if raw is None:
        return False
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise ValidationFailed(fields={"extension": N_("A list of extensions.")})
    for ext in raw:
        if ext.get("url") != COVERAGE_ACKNOWLEDGED or not isinstance(ext.get("valueBoolean"), bool):
            raise ValidationFailed(
                fields={
                    "extension": Text(
                        "Only {coverage_acknowledged} (valueBoolean) is accepted.",
                        coverage_acknowledged=COVERAGE_ACKNOWLEDGED,
                    )
                }
            )
    return any(ext["valueBoolean"] for ext in raw)


def _ref(body: dict[str, Any], name: str, kind: str) -> int:
    raw = body.get(name)
    ref = raw.get("reference") if isinstance(raw, dict) else None
    row_id = fhir_mapping.reference_id(ref, kind) if isinstance(ref, str) and ref.startswith(kind + "/") else None
    if row_id is None:
        raise ValidationFailed(fields={name: Text("Use {{'reference': '{kind}/<id>'}}.", kind=kind)})
    return row_id


async def _offer_at(rt: Runtime, appointment_id: int, body: dict[str, Any]) -> int:
    raw = body.get("start")
    start = moments.parse_instant(raw, seconds=False) if isinstance(raw, str) else None
    if start is None:
        raise ValidationFailed(fields={"start": N_("The offered time you accept: a dateTime with its offset.")})
    async with rt.db.read() as session:
        found = (
            await session.scalars(
                select(AppointmentOffer).where(
                    AppointmentOffer.appointment_id == appointment_id,
                    AppointmentOffer.start_at == start.astimezone(UTC),
                    AppointmentOffer.state == OfferState.OPEN,
                )
            )
        ).all()
    if len(found) != 1:
        raise Unprocessable(fields={"start": N_("Not one of the open offered times of this appointment.")})
    if "end" in body:
        end = body["end"]
        expected = found[0].start_at + timedelta(minutes=found[0].duration_minutes)
        if not isinstance(end, str) or moments.parse_instant(end, seconds=False) != expected:
            raise Unprocessable(fields={"end": N_("Must be the offered time's end.")})
    return found[0].id


def authorize(caller: Caller) -> None:
    """Only a patient answers offered times (403 for anyone else), decided before the body is read."""
    if not isinstance(caller, Actor) or caller.role is not Role.PATIENT:
        raise Forbidden(N_("Answers to offered times come from the patient's own account."))


async def create(
    rt: Runtime, caller: Caller, body: dict[str, Any], *, if_match: str | None
) -> tuple[dict[str, Any], int]:
    """The patient's answer: ``accepted`` (with the ``start`` of one open offer) books the appointment at that
    time; ``declined`` rejects every offer and cancels the request. With ``If-Match``, a stale version is 412."""
    authorize(caller)
    extra = sorted(set(body) - ACCEPTED)
    if extra:
        raise ValidationFailed(fields=dict.fromkeys(extra, N_("Not accepted in an answer here.")))
    status = body.get("participantStatus")
    if status not in ("accepted", "declined"):
        raise ValidationFailed(fields={"participantStatus": N_("Use accepted (one offered time) or declined (all).")})
    appointment_id = _ref(body, "appointment", "Appointment")
    patient_id = _ref(body, "actor", "Patient")
    acknowledged = _acknowledged(body.get("extension"))
    version = if_match_version(if_match)
    if not isinstance(caller, Actor) or caller.role is not Role.PATIENT:
        raise Forbidden(N_("Answers to offered times come from the patient's own account."))
    if patient_id != caller.patient_id:
        raise NotFound(N_("Patient not found."))
    async with rt.db.read() as session:
        await fhir_appointments.read_row(session, caller, appointment_id)
    try:
        if status == "accepted":
            offer_id = await _offer_at(rt, appointment_id, body)
            await offers.accept_offer(
                rt, caller, appointment_id, offer_id, version=version, coverage_acknowledged=acknowledged
            )
        else:
            await offers.reject_offers(rt, caller, appointment_id, version=version)
    except AppointmentChanged:
        raise VersionMismatch(N_("The appointment changed: read it again (its ETag) and answer again.")) from None
    except ValidationFailed as refused:
        if isinstance(refused, Unprocessable):
            raise
        raise Unprocessable(refused.message, fields=refused.fields) from None
    return await read(rt, caller, f"answer-{appointment_id}")
