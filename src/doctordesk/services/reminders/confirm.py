"""A patient's confirmation that they will come (docs/notifications.md#reminders): recorded for the appointment's
current start (a moved appointment is unconfirmed again), in its history and the audit trail, and told to the
doctor's screens (list, week) live and to webhooks (``appointment.confirmed``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    DomainEvent,
    appointment_topic,
    doctor_topic,
    patient_topic,
)
from doctordesk.services.audit.entries import audit_now
from doctordesk.services.uow import UnitOfWork
from doctordesk.store import plain_rows
from doctordesk.store.mail_tables import AppointmentConfirmation
from doctordesk.store.tables import Appointment, AppointmentHistory

# The domain event (webhooks: ``appointment.confirmed``) and the audit trail's action.
CONFIRMED_EVENT = EventKind.APPOINTMENT_PATIENT_CONFIRM
AUDIT_ACTION = "appointment.patient-confirm"


async def record(uow: UnitOfWork, appointment: Appointment, *, now: datetime) -> None:
    """The patient confirmed ``appointment`` (approved, locked by the caller) at its current start."""
    session = uow.session
    known = await session.scalar(
        select(AppointmentConfirmation.id).where(
            AppointmentConfirmation.appointment_id == appointment.id,
            AppointmentConfirmation.start_at == appointment.start_at,
        )
    )
    if known is None:
        session.add(
            AppointmentConfirmation(appointment_id=appointment.id, start_at=appointment.start_at, confirmed_at=now)
        )
    # Who: the patient (the link was theirs); the history's actor stays empty, as no one signed in.
    details = {"action": "patient-confirm", "via": "reminder", "start": appointment.start_at.isoformat()}
    history = {"appointment_id": appointment.id, "at": now, "actor_id": None, "from_status": appointment.status,
               "to_status": appointment.status, "details": details}  # fmt: skip
    await plain_rows.add(session, AppointmentHistory, history)
    await audit_now(
        session,
        at=now,
        actor_id=None,
        action=AUDIT_ACTION,
        entity="appointment",
        entity_id=appointment.id,
        details=details,
    )
    uow.emit(_confirmed(appointment, now=now))


def _confirmed(a: Appointment, *, now: datetime) -> DomainEvent:
    """The event: the doctor's list and week, the appointment's screens, webhooks (``appointment.confirmed``)."""
    return DomainEvent(
        kind=CONFIRMED_EVENT,
        topics=(
            appointment_topic(a.id),
            patient_topic(a.patient_id),
            ALL_APPOINTMENTS_TOPIC,
            doctor_topic(a.doctor_id),
        ),
        data={
            "appointment_id": a.id,
            "status": a.status,
            "version": a.version,
            "start": a.start_at.isoformat(),
            "confirmed_at": now.isoformat(),
        },
    )
