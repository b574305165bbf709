"""The integration API (``/integration/v1``): a clinic's booking system or patient portal creates appointment
requests, reports outside events and reads free times, authenticated by a service account's API key
(docs/integration.md). User access tokens are not accepted here, and API keys are accepted nowhere else."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Header, Path, Query
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, field_validator

from doctordesk.domain import moments
from doctordesk.domain.appointments.decisions import MAX_REASON_CHARS, Trigger
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import MAX_ID, NON_BLANK_MULTI_LINE_TEXT_PATTERN
from doctordesk.domain.integration import IDEMPOTENCY_KEY_PATTERN, body_hash, is_valid_idempotency_key
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.scheduling.free_times import free_of
from doctordesk.domain.texts import N_
from doctordesk.services.booking import free_times
from doctordesk.services.integration import outside_events, requests
from doctordesk.services.lifecycle.placing import RequestInput
from doctordesk.services.waitlist import api as waitlist_api
from doctordesk.web.bodies import StrictBody, stated
from doctordesk.web.deps import IntegrationDep, RuntimeDep
from doctordesk.web.params import DAY_IN_RANGE, STRICT_DATE, STRICT_ID, Instant, strict_int
from doctordesk.web.responses import SCREEN_RESPONSES, SUBMIT_RESPONSES

router = APIRouter(prefix="/integration/v1", tags=["integration API"])

Id = Annotated[int, Field(ge=1, le=MAX_ID)]
AppointmentId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
REPLAYED_HEADER = "Idempotent-Replayed"


# A start in whole minutes, as the API description states it (the service judges it, with its own message).
WHOLE_MINUTE = stated(pattern=moments.WHOLE_MINUTE_PATTERN)
# A service is a name (domain/names.py): something besides white space, nothing invisible.
SERVICE = stated(pattern=NAME_PATTERN)


def _whole_minute(value: datetime) -> datetime:
    if value.second or value.microsecond:
        raise ValueError(N_("Use a time in whole minutes (seconds 00)."))
    return value


class Strict(StrictBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    MULTILINE = frozenset({"note", "reason"})


class AppointmentRequestIn(Strict):
    patient: Id = Field(description="Patient id")
    doctor: Id = Field(description="Doctor (user) id")
    location: Id = Field(description="Location id")
    service: str = Field(default="consultation", min_length=1, max_length=64, json_schema_extra=SERVICE)
    start: Instant = Field(
        description="Requested start, RFC 3339 with offset, whole minutes", json_schema_extra=WHOLE_MINUTE
    )
    duration_minutes: int = Field(default=30, ge=5, le=480)
    note: str = Field(default="", max_length=2000)

    _minute = field_validator("start")(_whole_minute)


class VersionIn(Strict):
    version: Id | None = Field(default=None, description="When given, refused with APPOINTMENT_CHANGED if stale")


class CancelIn(VersionIn):
    by: Literal["patient", "clinic"]
    reason: str = Field(
        min_length=1, max_length=MAX_REASON_CHARS, json_schema_extra=stated(pattern=NON_BLANK_MULTI_LINE_TEXT_PATTERN)
    )


class RescheduleIn(VersionIn):
    start: Instant = Field(
        description="The new wanted start, RFC 3339 with offset, whole minutes", json_schema_extra=WHOLE_MINUTE
    )
    note: str = Field(default="", max_length=2000)

    _minute = field_validator("start")(_whole_minute)


def _idempotency_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not is_valid_idempotency_key(raw):
        raise ValidationFailed(fields={"Idempotency-Key": N_("Up to 128 printable ASCII characters.")})
    return raw


@router.post("/appointment-requests", status_code=201, responses=SUBMIT_RESPONSES)
async def create_appointment_request(
    rt: RuntimeDep,
    caller: IntegrationDep,
    body: AppointmentRequestIn,
    idempotency_key: Annotated[
        str | None,
        Header(
            description="Repeat the request safely: the same key and body get the first answer for 24 hours. Up "
            "to 128 printable ASCII characters",
            json_schema_extra=stated(pattern=IDEMPOTENCY_KEY_PATTERN),
        ),
    ] = None,
) -> JSONResponse:
    """Create an appointment request (status `requested`) for the doctor to review. Refused with the screens'
    codes when it breaks a scheduling rule (lead time, work hours, overlap). Scope `appointments:write`."""
    key = _idempotency_key(idempotency_key)
    answer = await requests.create_request(
        rt,
        caller,
        RequestInput(
            patient_id=body.patient,
            doctor_id=body.doctor,
            location_id=body.location,
            service=body.service,
            start=body.start,
            duration_minutes=body.duration_minutes,
            note=body.note,
        ),
        idempotency_key=key,
        request_hash=body_hash(body.model_dump(mode="json")),
    )
    headers = {REPLAYED_HEADER: "true"} if answer.replayed else None
    return JSONResponse(answer.body, status_code=answer.status_code, headers=headers)


@router.get("/appointments/{appointment_id}", responses=SCREEN_RESPONSES)
async def get_appointment(rt: RuntimeDep, caller: IntegrationDep, appointment_id: AppointmentId) -> dict[str, Any]:
    """One appointment: any with scope `appointments:read`; with only `appointments:write`, the ones this service
    account created (others are 404)."""
    return await requests.get_appointment(rt, caller, appointment_id)


async def _report(rt: Any, caller: Any, appointment_id: int, event: outside_events.OutsideEvent) -> dict[str, Any]:
    return await outside_events.report(rt, caller, appointment_id, event)


@router.post("/appointments/{appointment_id}/cancel", responses=SUBMIT_RESPONSES)
async def cancel(
    rt: RuntimeDep, caller: IntegrationDep, appointment_id: AppointmentId, body: CancelIn
) -> dict[str, Any]:
    """The appointment was canceled by the patient or the clinic, with a reason (requested, approved or pending
    appointments; open offers are withdrawn). Scope `appointments:write`."""
    event = outside_events.OutsideEvent(Trigger.CANCEL, version=body.version, by=body.by, reason=body.reason)
    return await _report(rt, caller, appointment_id, event)


@router.post("/appointments/{appointment_id}/complete", responses=SUBMIT_RESPONSES)
async def complete(
    rt: RuntimeDep, caller: IntegrationDep, appointment_id: AppointmentId, body: VersionIn
) -> dict[str, Any]:
    """The visit took place (approved appointments whose time has come). Scope `appointments:write`."""
    return await _report(
        rt, caller, appointment_id, outside_events.OutsideEvent(Trigger.COMPLETE, version=body.version)
    )


@router.post("/appointments/{appointment_id}/no-show", responses=SUBMIT_RESPONSES)
async def no_show(
    rt: RuntimeDep, caller: IntegrationDep, appointment_id: AppointmentId, body: VersionIn
) -> dict[str, Any]:
    """The patient did not come (approved appointments whose time has come). Scope `appointments:write`."""
    return await _report(rt, caller, appointment_id, outside_events.OutsideEvent(Trigger.NO_SHOW, version=body.version))


@router.post("/appointments/{appointment_id}/reschedule-request", responses=SUBMIT_RESPONSES)
async def reschedule_request(
    rt: RuntimeDep, caller: IntegrationDep, appointment_id: AppointmentId, body: RescheduleIn
) -> dict[str, Any]:
    """The patient asks for another time: the appointment goes back to `requested` at that time (checked by the
    scheduling rules) for the doctor to review again; history keeps the old time. Scope `appointments:write`."""
    event = outside_events.OutsideEvent(
        Trigger.RESCHEDULE_REQUEST, version=body.version, start=body.start, note=body.note
    )
    return await _report(rt, caller, appointment_id, event)


@router.get("/waitlist-offers", responses=SCREEN_RESPONSES)
async def get_waitlist_offers(rt: RuntimeDep, caller: IntegrationDep) -> dict[str, Any]:
    """The waitlist offers open now (docs/waitlist.md), earliest time first: which freed time is offered to which
    patient until when, and the clinic's mode. Scope `appointments:read`."""
    return await waitlist_api.open_offers(rt, caller)


@router.get("/free-times", responses=SCREEN_RESPONSES)
async def get_free_times(
    rt: RuntimeDep,
    caller: IntegrationDep,  # noqa: ARG001 - any valid key may read free times
    doctor: Annotated[int, Query(ge=1, le=MAX_ID, description="Doctor (user) id"), STRICT_ID],
    location: Annotated[int, Query(ge=1, le=MAX_ID, description="Location id"), STRICT_ID],
    first_day: Annotated[
        date,
        Query(alias="from", description="First day, local to the location", json_schema_extra=DAY_IN_RANGE),
        STRICT_DATE,
    ],
    last_day: Annotated[
        date,
        Query(alias="to", description="Last day (inclusive), at most 31 days", json_schema_extra=DAY_IN_RANGE),
        STRICT_DATE,
    ],
    duration: Annotated[
        int, Query(ge=5, le=480, description="Minutes the visit needs"), strict_int(minimum=5, maximum=480)
    ] = 30,
    step: Annotated[
        int | None,
        Query(ge=5, le=480, description="Minutes between starts (default: duration)"),
        strict_int(minimum=5, maximum=480),
    ] = None,
) -> dict[str, Any]:
    """The starts at which the doctor can be requested at the location: inside the doctor's work hours there (in
    the location's timezone, across clock changes), at least 2 hours ahead, not overlapping approved appointments
    or open offers."""
    timezone, grid = await free_times.slot_times(
        rt,
        doctor_id=doctor,
        location_id=location,
        first_day=first_day,
        last_day=last_day,
        duration_minutes=duration,
        step_minutes=step or duration,
    )
    starts = free_of(grid)
    zone = ZoneInfo(timezone)
    span = timedelta(minutes=duration)
    return {
        "doctor": doctor,
        "location": location,
        "timezone": timezone,
        "duration_minutes": duration,
        "free": [
            {"start": s.astimezone(zone).isoformat(), "end": (s + span).astimezone(zone).isoformat()} for s in starts
        ],
    }
