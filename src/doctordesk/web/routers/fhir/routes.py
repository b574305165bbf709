"""The HL7 FHIR R4 (4.0.1) interface under ``/fhir`` (docs/fhir.md): thin routes that parse, call one service and
answer ``application/fhir+json``; every error is an OperationOutcome (``web/routers/fhir/http.FhirRoute``)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response

from doctordesk import __version__
from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir import subscriptions as subscription_rules
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.files.attachments import content_disposition
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import answers as fhir_answers
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import audit_events as fhir_audit
from doctordesk.services.fhir import cancel as fhir_cancel
from doctordesk.services.fhir import capability as fhir_capability
from doctordesk.services.fhir import chat as fhir_chat
from doctordesk.services.fhir import deliveries as fhir_deliveries
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import everything as fhir_everything
from doctordesk.services.fhir import finding as fhir_finding
from doctordesk.services.fhir import history as fhir_history
from doctordesk.services.fhir import holds as fhir_holds
from doctordesk.services.fhir import people as fhir_people
from doctordesk.services.fhir import requests as fhir_requests
from doctordesk.services.fhir import slots as fhir_slots
from doctordesk.services.fhir import subscriptions as fhir_subscriptions
from doctordesk.services.fhir import waitlist as fhir_waitlist
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.search import Search
from doctordesk.web.deps import FhirCallerDep, RuntimeDep
from doctordesk.web.errors import allowed_methods
from doctordesk.web.routers.fhir.http import (
    FhirResponse,
    FhirRoute,
    fhir_body,
    fhir_responses,
    json_body,
    resource_response,
)

router = APIRouter(
    prefix="/fhir",
    tags=["FHIR R4"],
    route_class=FhirRoute,
    default_response_class=FhirResponse,
    responses=fhir_responses(),
)

PreferHeader = Annotated[str | None, Header(description="handling=strict: refuse unknown search parameters")]
IfMatch = Annotated[str | None, Header(description='W/"n": act only if the appointment is at version n (else 412)')]
IfNoneExist = Annotated[
    str | None, Header(description="identifier=[system|]value: create only if no appointment has that identifier")
]


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/") + "/fhir"


def _search(request: Request, resource_type: str, prefer: str | None) -> Search:
    strict = any(p.strip() == "handling=strict" for p in (prefer or "").split(";"))
    return Search(_base(request), resource_type, list(request.query_params.multi_items()), strict=strict)


def _id(raw: str, resource_type: str) -> int:
    row_id = fhir_mapping.parse_logical_id(raw)
    if row_id is None:
        raise NotFound(Text("{resource_type} not found.", resource_type=resource_type))
    return row_id


Resource = dict[str, Any]
Fetch = Callable[[Runtime, Caller, str], Awaitable[Resource | tuple[Resource, int]]]


def _by_id(kind: str, read: Callable[[Runtime, Caller, int], Awaitable[Resource]]) -> Fetch:
    """A read by a numeric logical id (anything else is 404, as an unknown id)."""
    return lambda rt, caller, raw: read(rt, caller, _id(raw, kind))


def read_route(kind: str, param: str, fetch: Fetch, doc: str, **options: Any) -> None:
    """``GET /<kind>/{<param>}``: the one shape of every read. ``fetch`` answers the resource, or the resource and
    its version (then ``ETag``). The path keeps its parameter's name, so /openapi.json reads as before."""

    async def route(rt: RuntimeDep, caller: FhirCallerDep, **path: str) -> FhirResponse:
        found = await fetch(rt, caller, path[param])
        if isinstance(found, tuple):
            return resource_response(found[0], version=found[1])
        return FhirResponse(found)

    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    route.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("rt", keyword, annotation=RuntimeDep),
            inspect.Parameter("caller", keyword, annotation=FhirCallerDep),
            inspect.Parameter(param, keyword, annotation=str),
        ],
        return_annotation=FhirResponse,
    )
    name = "read_" + re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower()
    router.add_api_route(
        f"/{kind}/{{{param}}}", route, methods=["GET"], name=name, description=inspect.cleandoc(doc), **options
    )


def search_route(kind: str, search: Callable[[Runtime, Caller, Search], Awaitable[Resource]], doc: str) -> None:
    """``GET /<kind>``: the one shape of every search (the parameters checked by ``services/fhir/search.py``)."""

    async def route(
        rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: PreferHeader = None
    ) -> FhirResponse:
        return FhirResponse(await search(rt, caller, _search(request, kind, prefer)))

    name = "search_" + re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower() + "s"
    router.add_api_route(f"/{kind}", route, methods=["GET"], name=name, description=inspect.cleandoc(doc))


@router.get("/metadata")
async def metadata(rt: RuntimeDep, request: Request) -> FhirResponse:
    """The CapabilityStatement: exactly the resources, interactions and search parameters served here."""
    started = rt.clock.now().replace(hour=0, minute=0, second=0, microsecond=0)
    body = fhir_capability.capability_statement(_base(request), software_version=__version__, published=started)
    return FhirResponse(body)


@router.get("/Appointment/$find")
async def find_appointments(rt: RuntimeDep, caller: FhirCallerDep, request: Request) -> FhirResponse:
    """Argonaut Scheduling's ``$find``: the free times between ``start`` and ``end`` (at most 31 days), by
    ``practitioner``, ``location`` and ``service-type``, as ``proposed`` Appointments to hold or book; with
    ``patient`` (a patient names themself) the Appointments carry that patient, ready to hold or book."""
    items = list(request.query_params.multi_items())
    return FhirResponse(await fhir_finding.find(rt, caller, items, _base(request)))


@router.post("/Appointment/$hold", openapi_extra=fhir_body("Parameters"))
async def hold_appointment(rt: RuntimeDep, caller: FhirCallerDep, request: Request) -> FhirResponse:
    """Argonaut Scheduling's ``$hold``: keep the time of the ``appt-resource`` Appointment (from ``$find``, with
    the Patient) for 10 minutes; nobody else can take it meanwhile. Answers the Appointment ``pending`` with the
    hold's id and end as extensions."""
    fhir_requests.authorize(caller)
    body = await json_body(request, "Parameters")
    return FhirResponse(await fhir_holds.hold(rt, caller, body))


@router.post("/Appointment/$book", responses=fhir_responses(created=True), openapi_extra=fhir_body("Parameters"))
async def book_appointment(rt: RuntimeDep, caller: FhirCallerDep, request: Request) -> FhirResponse:
    """Argonaut Scheduling's ``$book``: request the ``appt-resource`` Appointment (held or not) as the booking
    screen and the integration API do; the doctor decides on Review and Approve. 201 with the Appointment
    (``proposed`` until then) in a Bundle; a time taken meanwhile is 422."""
    fhir_requests.authorize(caller)
    body = await json_body(request, "Parameters")
    booked = await fhir_holds.book(rt, caller, body)
    appointment_id = booked.resource["id"]
    location = f"{_base(request)}/Appointment/{appointment_id}/_history/{booked.version}"
    entry = {"fullUrl": f"{_base(request)}/Appointment/{appointment_id}", "resource": booked.resource}
    bundle = {"resourceType": "Bundle", "type": "collection", "entry": [entry]}
    return resource_response(bundle, status_code=201, location=location)


@router.post("/Appointment/{appointment_id}/$cancel", openapi_extra=fhir_body("Parameters"))
async def cancel_appointment(
    rt: RuntimeDep, caller: FhirCallerDep, appointment_id: str, request: Request, if_match: IfMatch = None
) -> FhirResponse:
    """The integration API's cancel through FHIR (API keys with ``appointments:write``): ``by`` (``patient`` or
    ``clinic``) and ``reason``; the same checks, history, audit and webhooks. Answers the Appointment."""
    fhir_cancel.authorize(caller)
    row_id = _id(appointment_id, "Appointment")
    body = await json_body(request, "Parameters")
    resource, version = await fhir_cancel.cancel(rt, caller, row_id, body, if_match=if_match)
    return resource_response(resource, version=version)


read_route(
    "Appointment",
    "appointment_id",
    lambda rt, caller, raw: (
        fhir_waitlist.read(rt, caller, raw)
        if raw.startswith(fhir_waitlist.PREFIX)
        else fhir_appointments.read(rt, caller, _id(raw, "Appointment"))
    ),
    "One Appointment (``ETag``: its version), or a waitlist entry as an Appointment with status ``waitlist`` "
    "(``waitlist-{id}``, docs/waitlist.md); 404 when unknown or not the caller's to see.",
)


@router.get("/Appointment/{appointment_id}/_history/{version_id}")
async def vread_appointment(
    rt: RuntimeDep, caller: FhirCallerDep, appointment_id: str, version_id: str
) -> FhirResponse:
    """One version of an Appointment, as it was (the ``Location`` of a create names the first)."""
    row_id = _id(appointment_id, "Appointment")
    body = await fhir_history.vread(rt, caller, row_id, fhir_history.version_id(version_id))
    return resource_response(body, version=int(body["meta"]["versionId"]))


@router.get("/Appointment/{appointment_id}/_history")
async def appointment_history(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, appointment_id: str
) -> FhirResponse:
    """The Appointment's kept versions, newest first: a history Bundle."""
    row_id = _id(appointment_id, "Appointment")
    names = [k for k, _ in request.query_params.multi_items()]
    return FhirResponse(await fhir_history.history(rt, caller, row_id, _base(request), names))


search_route(
    "Appointment",
    fhir_appointments.search,
    "Appointments by date, status, practitioner, patient, location, identifier: a searchset Bundle; "
    "``status=waitlist`` alone lists the waiting waitlist entries instead (docs/fhir.md#waitlist-entries).",
)


@router.post("/Appointment", responses=fhir_responses(created=True), openapi_extra=fhir_body("Appointment"))
async def create_appointment(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, if_none_exist: IfNoneExist = None
) -> FhirResponse:
    """A new appointment request (status ``proposed``) by the same rules and codes as the integration API;
    conditional with ``If-None-Exist`` on the clinic's identifier (an existing match answers 200, nothing new)."""
    fhir_requests.authorize(caller)
    body = await json_body(request, "Appointment")
    created = await fhir_requests.create(rt, caller, body, if_none_exist=if_none_exist)
    location = f"{_base(request)}/Appointment/{created.resource['id']}/_history/{created.version}"
    return resource_response(
        created.resource, status_code=201 if created.created else 200, version=created.version, location=location
    )


read_route(
    "AppointmentResponse",
    "response_id",
    fhir_answers.read,
    "An offer of Suggested Scheduling (``offer-n``) or the patient's answer (``answer-n``).",
)
search_route(
    "AppointmentResponse",
    fhir_answers.search,
    "The offers and answers of the appointments the caller may see, by ``appointment`` and ``actor``.",
)


@router.post(
    "/AppointmentResponse", responses=fhir_responses(created=True), openapi_extra=fhir_body("AppointmentResponse")
)
async def create_appointment_response(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, if_match: IfMatch = None
) -> FhirResponse:
    """The patient's answer to the offered times: ``accepted`` with the ``start`` of one offer (the appointment
    is booked at that time), or ``declined`` (every offer rejected, the request canceled)."""
    fhir_answers.authorize(caller)
    body = await json_body(request, "AppointmentResponse")
    answer, version = await fhir_answers.create(rt, caller, body, if_match=if_match)
    location = f"{_base(request)}/AppointmentResponse/{answer['id']}"
    return resource_response(answer, status_code=201, version=version, location=location)


@router.post("/Subscription", responses=fhir_responses(created=True), openapi_extra=fhir_body("Subscription"))
async def create_subscription(rt: RuntimeDep, caller: FhirCallerDep, request: Request) -> FhirResponse:
    """A Subscription (R4, ``rest-hook``) to appointment changes: ``criteria`` ``Appointment?`` by ``status``,
    ``practitioner``, ``patient`` and ``location``; ``payload`` ``application/fhir+json`` (the Appointment is PUT to
    the endpoint as a FHIR base) or none (an empty POST); ``header``: extra headers. Active at once; the answer
    carries the signing secret once (extension ``urn:doctordesk:fhir:signing-secret``). API keys need
    ``subscriptions:write``; doctors subscribe to their own appointments; patients may not."""
    fhir_subscriptions.require_subscriber(caller)
    body = await json_body(request, "Subscription")
    created, secret = await fhir_subscriptions.create(rt, caller, body)
    shown = {**created, "extension": [{"url": subscription_rules.SECRET_EXTENSION, "valueString": secret}]}
    headers = {"Location": f"{_base(request)}/Subscription/{created['id']}", "Cache-Control": "no-store"}
    return FhirResponse(shown, status_code=201, headers=headers)


read_route(
    "Subscription",
    "subscription_id",
    _by_id("Subscription", fhir_subscriptions.read),
    "One of the caller's subscriptions, with its status (``error`` and the reason when delivery stopped).",
    responses=fhir_responses(gone=True),
)


@router.get("/Subscription/{subscription_id}/$deliveries", responses=fhir_responses(gone=True))
async def subscription_deliveries(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, subscription_id: str
) -> FhirResponse:
    """The subscription's delivery log, newest first (``_count``, default 50, at most 200): each notification's
    event id (``webhook-id``), event, subject, state, attempts and last outcome, as a Parameters resource."""
    row_id = _id(subscription_id, "Subscription")
    unknown = sorted({k for k, _ in request.query_params.multi_items()} - {"_count", "_format"})
    if unknown:
        raise NotSupported(fields=dict.fromkeys(unknown, N_("Only _count is taken here.")))
    count = fhir_mapping.count(request.query_params.getlist("_count"))
    return FhirResponse(await fhir_deliveries.deliveries(rt, caller, row_id, count))


search_route("Subscription", fhir_subscriptions.search, "The caller's subscriptions, by ``status``.")


@router.put(
    "/Subscription/{subscription_id}", responses=fhir_responses(gone=True), openapi_extra=fhir_body("Subscription")
)
async def update_subscription(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, subscription_id: str
) -> FhirResponse:
    """Replace a subscription: ``status`` ``off`` pauses it, ``requested`` turns it on again (also after
    ``error``); criteria, channel, ``reason`` and ``end`` as on create."""
    row_id = _id(subscription_id, "Subscription")
    fhir_subscriptions.require_subscriber(caller)
    body = await json_body(request, "Subscription")
    return FhirResponse(await fhir_subscriptions.update(rt, caller, row_id, body))


@router.delete("/Subscription/{subscription_id}")
async def delete_subscription(rt: RuntimeDep, caller: FhirCallerDep, subscription_id: str) -> FhirResponse:
    """Delete a subscription: it is off for good and reads 410 (the row stays, as history). Deleting it again
    answers the same."""
    row_id = _id(subscription_id, "Subscription")
    await fhir_subscriptions.delete(rt, caller, row_id)
    message = _(Text("Subscription {id} is deleted.", id=row_id))
    return FhirResponse(
        fhir_mapping.outcome([{"severity": "information", "code": "informational", "details": {"text": message}}])
    )


read_route("Practitioner", "doctor_id", _by_id("Practitioner", fhir_directory.read_practitioner), "A doctor.")
search_route(
    "Practitioner", fhir_people.search_practitioners, "The clinic's doctors, by ``_id``, ``identifier`` and ``name``."
)


read_route(
    "Location", "location_id", _by_id("Location", fhir_directory.read_location), "A location, with its time zone."
)
search_route("Location", fhir_directory.search_locations, "The clinic's locations.")


read_route(
    "PractitionerRole",
    "role_id",
    lambda rt, caller, raw: fhir_directory.read_pair(rt, caller, raw, "PractitionerRole"),
    "A doctor at a location (``<doctor>-<location>``), with the work hours as availableTime.",
)
search_route(
    "PractitionerRole",
    lambda rt, caller, search: fhir_directory.search_pairs(rt, caller, search, "PractitionerRole"),
    "Doctors at locations, by ``practitioner`` and ``location``.",
)


read_route(
    "Schedule",
    "schedule_id",
    lambda rt, caller, raw: fhir_directory.read_pair(rt, caller, raw, "Schedule"),
    "A doctor's schedule at a location (``<doctor>-<location>``).",
)
search_route(
    "Schedule",
    lambda rt, caller, search: fhir_directory.search_pairs(rt, caller, search, "Schedule"),
    "Schedules, by ``actor`` (Practitioner/<id> or Location/<id>).",
)


read_route(
    "Slot",
    "slot_id",
    fhir_slots.read,
    "A time of the schedule's grid: free, busy or busy-tentative (404 outside the work hours).",
)
search_route(
    "Slot",
    fhir_slots.search,
    "The grid of one ``schedule`` in a ``start`` range, by ``status`` (free, busy, busy-tentative), as the booking"
    " screen computes it.",
)


@router.get("/Patient/{patient_id}/$everything")
async def patient_everything(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, patient_id: str, prefer: PreferHeader = None
) -> FhirResponse:
    """R4's Patient ``$everything``: the patient, their appointments (with offers and answers) and the doctors and
    locations those name, as the caller may read them; pages of ``_count`` appointments, ``_since`` (changed
    since), ``_type`` (which of those types). 404 for a patient the caller may not see."""
    row_id = _id(patient_id, "Patient")
    search = _search(request, f"Patient/{row_id}/$everything", prefer)
    return FhirResponse(await fhir_everything.everything(rt, caller, row_id, search))


read_route(
    "Patient",
    "patient_id",
    _by_id("Patient", fhir_directory.read_patient),
    "A patient the caller may see (a patient themself; a doctor their patients).",
)
search_route(
    "Patient",
    fhir_people.search_patients,
    "The patients the caller may see, by ``_id``, ``identifier``, ``name``, ``family``, ``given`` and\n``birthdate``.",
)


read_route(
    "AuditEvent", "event_id", _by_id("AuditEvent", fhir_audit.read), "One entry of the audit trail (admins only)."
)
search_route(
    "AuditEvent",
    fhir_audit.search,
    "The audit trail, newest first (admins only): by ``date``, ``entity`` and ``subtype``.",
)


read_route(
    "Communication",
    "message_id",
    _by_id("Communication", fhir_chat.read),
    "A chat message (the chat's rights: the appointment's doctor, support, admins).",
)
search_route(
    "Communication", fhir_chat.search, "One appointment's chat messages (``about=Appointment/<id>``), newest first."
)


@router.get("/Binary/{attachment_id}", responses=fhir_responses(any_file=True))
async def read_binary(rt: RuntimeDep, caller: FhirCallerDep, request: Request, attachment_id: str) -> Response:
    """A chat message's file, by the chat download's checks: the file itself, always as a download, unless the
    client asks for ``application/fhir+json`` (then a Binary resource with the data in base64)."""
    resource, file = await fhir_chat.binary(rt, caller, _id(attachment_id, "Binary"))
    private = {"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"}
    if fhir_mapping.MEDIA_TYPE in request.headers.get("accept", ""):
        return FhirResponse(resource, headers=private)
    headers = {**private, "Content-Disposition": content_disposition(file.filename)}
    return Response(file.data, media_type=file.mime, headers=headers)


@router.api_route(
    "/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], include_in_schema=False
)
async def not_supported(request: Request, rest: str) -> FhirResponse:
    """Anything else under /fhir: an OperationOutcome, 405 (with ``Allow``) for a method a served path does not
    take, 404 for an unknown resource type, 405 for an interaction the CapabilityStatement does not list."""
    allow = allowed_methods(request)
    if allow:
        raise NotSupported(Text("{method} is not supported here.", method=request.method), status=405, allow=allow)
    kind = rest.split("/")[0]
    if kind in fhir_capability.SUPPORTED:
        raise NotSupported(Text("This interaction on {kind} is not supported.", kind=kind), status=405)
    raise NotSupported(Text("Unknown or unsupported resource type {kind}.", kind=repr(kind)), status=404)
