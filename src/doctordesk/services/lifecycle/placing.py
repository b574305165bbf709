"""Placing an appointment request: the one way a request comes in (the patient's booking screen, the integration
API, FHIR's create and ``$book``, a waitlist offer accepted), by the scheduling rules the screens apply, with its
first status through ``transitions.transition``; and which service account asked for it (its origin)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.integration import Integration
from doctordesk.domain.names import check_name
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import Original, Proposal, check_proposals, windows
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.scheduling.busy_times import busy_times, lock_schedules
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.uow import UnitOfWork
from doctordesk.store import plain_rows
from doctordesk.store.integration_tables import IntegrationRequest
from doctordesk.store.tables import Appointment, Patient

# Never equal to a real request, so every rule applies to the time asked for.
_NO_ORIGINAL = Original(0, 0, datetime(1970, 1, 1, tzinfo=UTC))

MAX_SERVICE_CHARS = 64  # a service's name (the column's width)


@dataclass(frozen=True, slots=True)
class RequestInput:
    patient_id: int
    doctor_id: int
    location_id: int
    service: str
    start: datetime
    duration_minutes: int
    note: str


async def check_time(
    session: AsyncSession,
    clinic: Clinic,
    *,
    now: datetime,
    appointment_id: int,
    doctor_id: int,
    location_id: int,
    start: datetime,
    duration_minutes: int,
) -> None:
    """The screens' scheduling rules for one wanted time (lead time, the booking horizon, work hours in the
    location's timezone, overlap with approved appointments and open offers of other appointments);
    FIELDS_VALIDATION_ERROR naming ``start`` with the screens' message when one is broken."""
    proposal = Proposal(1, doctor_id, location_id, start, duration_minutes)
    await lock_schedules(session, [doctor_id])
    busy = await busy_times(session, appointment_id, windows([proposal]), now=now)
    errors = check_proposals(
        [proposal],
        now=now,
        horizon=clinic.horizon,
        original=_NO_ORIGINAL,
        directory=clinic.directory,
        work_hours=clinic.work_hours,
        busy=busy,
        exceptions=clinic.hours_exceptions,
    )
    if errors:
        message = next(iter(errors.values()))
        raise ValidationFailed(message, fields={"start": message})


def _check_refs(c: Clinic, req: RequestInput, patient: str | None) -> None:
    fields: dict[str, str] = {}
    check_name(fields, "service", req.service, max_chars=MAX_SERVICE_CHARS)
    if patient is None:
        fields["patient"] = N_("Unknown patient.")
    if req.doctor_id not in c.directory.doctors:
        fields["doctor"] = N_("Unknown doctor.")
    if req.location_id not in c.directory.locations:
        fields["location"] = N_("Unknown location.")
    elif req.doctor_id in c.directory.doctors and (req.doctor_id, req.location_id) not in c.work_hours:
        fields["location"] = N_("The doctor does not work at this location.")
    if fields:
        raise ValidationFailed(fields=fields)


@dataclass(frozen=True, slots=True)
class Placed:
    """A request just placed: its row (not in the session: written by a plain INSERT) and the patient's name."""

    appointment: Appointment
    patient_name: str


_PATIENT_NAME = select(Patient.name).where(Patient.id == bindparam("patient_id"))


async def check_request(session: AsyncSession, clinic: Clinic, req: RequestInput, *, now: datetime) -> str:
    """The checks of a new request (known references, the service's name, the time's rules, with the doctor's
    schedule locked until the transaction ends); the patient's name. FHIR's ``$hold`` runs them too."""
    patient = await session.scalar(_PATIENT_NAME, {"patient_id": req.patient_id})
    _check_refs(clinic, req, patient)
    assert patient is not None
    await check_time(
        session,
        clinic,
        now=now,
        appointment_id=0,
        doctor_id=req.doctor_id,
        location_id=req.location_id,
        start=req.start,
        duration_minutes=req.duration_minutes,
    )
    return patient


async def place_request(
    rt: Runtime,
    uow: UnitOfWork,
    caller: Actor | Integration,
    req: RequestInput,
    *,
    now: datetime,
    external_id: str | None = None,
) -> Placed:
    """A new appointment request (status requested) by the scheduling rules the screens apply, with its history,
    audit, push and the doctor's list updated: the one way a request comes in, from the integration API, FHIR and
    the patient's booking screen. Refused (FIELDS_VALIDATION_ERROR, nothing written) when a reference is unknown,
    the service breaks the name rule (domain/names.py) or the time breaks a rule. Its rows are written by plain
    INSERTs (``store/plain_rows``): the hot path of the clinic's booking systems, where the unit of work's flush
    cost more than the statements."""
    session = uow.session
    c = await cached_clinic(rt, session)
    patient = await check_request(session, c, req, now=now)
    values: dict[str, Any] = {
        "patient_id": req.patient_id,
        "doctor_id": req.doctor_id,
        "location_id": req.location_id,
        "service": req.service,
        "start_at": req.start,
        "duration_minutes": req.duration_minutes,
        "status": int(Status.REQUESTED),
        "version": 1,
        "chat_enabled": True,
        "disclaimer_required": False,
        "prescription_needed": False,
        "request_note": req.note or None,
        "created_at": now,
        "updated_at": now,
        "external_id": external_id,
    }
    a = Appointment(id=await plain_rows.add_returning_id(session, Appointment, values), **values)
    when = Moment(req.start, c.directory.locations[req.location_id])
    details: dict[str, Any] = {"action": Trigger.REQUEST.value, "start": req.start.isoformat(), "note": req.note}
    await transition(
        uow,
        caller,
        a,
        Status.REQUESTED,
        Trigger.REQUEST,
        details,
        now=now,
        notify=(req.doctor_id,),
        text=Text("New appointment request from {name} for {when}.", name=patient, when=when),
        created=True,
    )
    return Placed(a, patient)


async def record_origin(
    session: AsyncSession, caller: Integration, appointment: Appointment, *, note: str, now: datetime
) -> None:
    """Remember which service account asked for the appointment (a key with only ``appointments:write`` reads
    back what its account created)."""
    row = {
        "appointment_id": appointment.id,
        "service_account_id": caller.service_account_id,
        "note": note,
        "created_at": now,
    }
    await plain_rows.add(session, IntegrationRequest, row)
