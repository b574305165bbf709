"""The HL7 FHIR R4 (4.0.1) interface under ``/fhir`` (docs/fhir.md): thin routes that parse, call one service and
answer ``application/fhir+json``; every error is an OperationOutcome (``web/fhir_http.FhirRoute``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request

from doctordesk import __version__
from doctordesk.domain import fhir
from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir_errors import NotSupported
from doctordesk.services import fhir_answers, fhir_appointments, fhir_capability, fhir_requests
from doctordesk.services.fhir_search import Search
from doctordesk.web.deps import FhirCallerDep, RuntimeDep
from doctordesk.web.fhir_http import FhirResponse, FhirRoute, json_body, resource_response

router = APIRouter(prefix="/fhir", tags=["FHIR R4"], route_class=FhirRoute)

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
    row_id = fhir.parse_logical_id(raw)
    if row_id is None:
        raise NotFound(f"{resource_type} not found.")
    return row_id


@router.get("/metadata")
async def metadata(rt: RuntimeDep, request: Request) -> FhirResponse:
    """The CapabilityStatement: exactly the resources, interactions and search parameters served here."""
    started = rt.clock.now().replace(hour=0, minute=0, second=0, microsecond=0)
    body = fhir_capability.capability_statement(_base(request), software_version=__version__, published=started)
    return FhirResponse(body)


@router.get("/Appointment/{appointment_id}")
async def read_appointment(rt: RuntimeDep, caller: FhirCallerDep, appointment_id: str) -> FhirResponse:
    """One Appointment (``ETag``: its version); 404 when unknown or not the caller's to see."""
    body, version = await fhir_appointments.read(rt, caller, _id(appointment_id, "Appointment"))
    return resource_response(body, version=version)


@router.get("/Appointment")
async def search_appointments(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: PreferHeader = None
) -> FhirResponse:
    """Appointments by date, status, practitioner, patient, location, identifier: a searchset Bundle."""
    return FhirResponse(await fhir_appointments.search(rt, caller, _search(request, "Appointment", prefer)))


@router.post("/Appointment")
async def create_appointment(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, if_none_exist: IfNoneExist = None
) -> FhirResponse:
    """A new appointment request (status ``proposed``) by the same rules and codes as the integration API;
    conditional with ``If-None-Exist`` on the clinic's identifier (an existing match answers 200, nothing new)."""
    body = await json_body(request, "Appointment")
    created = await fhir_requests.create(rt, caller, body, if_none_exist=if_none_exist)
    location = f"{_base(request)}/Appointment/{created.resource['id']}/_history/{created.version}"
    return resource_response(
        created.resource, status_code=201 if created.created else 200, version=created.version, location=location
    )


@router.get("/AppointmentResponse/{response_id}")
async def read_appointment_response(rt: RuntimeDep, caller: FhirCallerDep, response_id: str) -> FhirResponse:
    """An offer of Suggested Scheduling (``offer-n``) or the patient's answer (``answer-n``)."""
    body, version = await fhir_answers.read(rt, caller, response_id)
    return resource_response(body, version=version)


@router.get("/AppointmentResponse")
async def search_appointment_responses(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: PreferHeader = None
) -> FhirResponse:
    """The offers and answers of the appointments the caller may see, by ``appointment`` and ``actor``."""
    return FhirResponse(await fhir_answers.search(rt, caller, _search(request, "AppointmentResponse", prefer)))


@router.post("/AppointmentResponse")
async def create_appointment_response(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, if_match: IfMatch = None
) -> FhirResponse:
    """The patient's answer to the offered times: ``accepted`` with the ``start`` of one offer (the appointment
    is booked at that time), or ``declined`` (every offer rejected, the request canceled)."""
    body = await json_body(request, "AppointmentResponse")
    answer, version = await fhir_answers.create(rt, caller, body, if_match=if_match)
    location = f"{_base(request)}/AppointmentResponse/{answer['id']}"
    return resource_response(answer, status_code=201, version=version, location=location)


@router.api_route(
    "/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], include_in_schema=False
)
async def not_supported(rest: str) -> FhirResponse:
    """Anything else under /fhir: an OperationOutcome, 404 for an unknown resource type, 405 for an interaction
    the CapabilityStatement does not list."""
    kind = rest.split("/")[0]
    if kind in fhir_capability.SUPPORTED:
        raise NotSupported(f"This interaction on {kind} is not supported.", status=405)
    raise NotSupported(f"Unknown or unsupported resource type {kind!r}.", status=404)
