"""Outside events on an appointment, reported by a clinic's systems: canceled (by the patient or the clinic, with a
reason), completed, no-show, and the patient's request to reschedule.

Each is one transaction through ``lifecycle.transitions.transition`` (status, version, history, audit, event), following
the table in ``domain/appointments/decisions.py``: no event on a final appointment, complete and no-show only on an
approved one whose time has come. Canceling or rescheduling withdraws the open offers. A reschedule request puts the
appointment back to requested at the new time, checked by the screens' scheduling rules, so the doctor reviews it again;
history keeps the time it had.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select

from doctordesk.domain.appointments.decisions import Trigger, outside_next_status
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, NotFound
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.runtime import Runtime
from doctordesk.services.integration.requests import appointment_body, require, require_visible
from doctordesk.services.lifecycle.placing import check_time
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, Patient

CanceledBy = Literal["patient", "clinic"]


@dataclass(frozen=True, slots=True)
class OutsideEvent:
    trigger: Trigger
    version: int | None = None  # when given, the appointment must still be at it (APPOINTMENT_CHANGED otherwise)
    by: CanceledBy | None = None  # cancel
    reason: str = ""  # cancel
    start: datetime | None = None  # reschedule-request
    note: str = ""  # reschedule-request


async def report(rt: Runtime, caller: Integration, appointment_id: int, event: OutsideEvent) -> dict[str, Any]:
    """Apply one outside event; the appointment as it is afterwards."""
    require(caller, Scope.APPOINTMENTS_WRITE)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        a = (
            await session.execute(select(Appointment).where(Appointment.id == appointment_id).with_for_update())
        ).scalar_one_or_none()
        if a is None:
            raise NotFound(N_("Appointment not found."))
        await require_visible(session, caller, a.id)  # before the version and the status say anything
        if event.version is not None and event.version != a.version:
            raise AppointmentChanged()
        to = outside_next_status(Status(a.status), event.trigger, started=a.start_at <= now)
        patient_name, patient_user = (
            await session.execute(select(Patient.name, Patient.user_id).where(Patient.id == a.patient_id))
        ).one()
        c = await cached_clinic(rt, session)
        timezone = c.directory.locations.get(a.location_id, "UTC")
        when = Moment(a.start_at, timezone)
        details: dict[str, Any] = {"action": event.trigger.value}
        notify: tuple[int, ...] = ()
        text: str | None = None
        if event.trigger is Trigger.CANCEL:
            details.update(by=event.by, reason=event.reason)
            await _withdraw_offers(session, a.id, now)
            if event.by == "patient":
                text = Text(
                    "{patient} canceled the appointment on {when}: {reason}",
                    patient=patient_name, when=when, reason=event.reason,
                )  # fmt: skip
                notify = (a.doctor_id,)
            else:
                notify = (a.doctor_id, *((patient_user,) if patient_user is not None else ()))
                text = Text("The clinic canceled the appointment on {when}: {reason}", when=when, reason=event.reason)
        elif event.trigger is Trigger.RESCHEDULE_REQUEST:
            assert event.start is not None
            await check_time(
                session,
                c,
                now=now,
                appointment_id=a.id,
                doctor_id=a.doctor_id,
                location_id=a.location_id,
                start=event.start,
                duration_minutes=a.duration_minutes,
            )
            details.update(
                previous={"status": a.status, "start": a.start_at.isoformat()},
                start=event.start.isoformat(),
                note=event.note,
            )
            await _withdraw_offers(session, a.id, now)
            a.start_at = event.start
            new_when = Moment(event.start, timezone)
            text = Text(
                "{patient} asks to move the appointment on {when} to {new_when}.",
                patient=patient_name, when=when, new_when=new_when,
            )  # fmt: skip
            notify = (a.doctor_id,)
        await transition(uow, caller, a, to, event.trigger, details, now=now, notify=notify, text=text)
        await session.flush()
        body = await appointment_body(session, a.id)
    return body


async def _withdraw_offers(session: Any, appointment_id: int, now: datetime) -> None:
    offers = (
        await session.scalars(
            select(AppointmentOffer).where(
                AppointmentOffer.appointment_id == appointment_id, AppointmentOffer.state == OfferState.OPEN
            )
        )
    ).all()
    for o in offers:
        o.state, o.answered_at = OfferState.WITHDRAWN, now
