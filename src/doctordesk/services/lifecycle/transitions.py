"""Every status change of an appointment goes through ``transition``: the row (status, version), history, audit,
review drafts dropped, notices, and the event, inside the caller's unit of work. Review and Approve's decisions, the
patient's answers to offers and cancellations, booking, the integration API, FHIR and the waitlist all use it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import format_local
from doctordesk.domain.event_kinds import transition_kind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    DomainEvent,
    appointment_topic,
    doctor_topic,
    patient_topic,
)
from doctordesk.domain.integration import Integration
from doctordesk.domain.roles import Actor
from doctordesk.services.appointments import notices
from doctordesk.services.audit.entries import audit_now
from doctordesk.services.uow import UnitOfWork
from doctordesk.store import plain_rows
from doctordesk.store.review_tables import ReviewDraft
from doctordesk.store.tables import Appointment, AppointmentHistory, Patient


async def transition(
    uow: UnitOfWork,
    actor: Actor | Integration,
    appointment: Appointment,
    to: Status,
    trigger: Trigger,
    details: dict[str, Any],
    *,
    now: datetime,
    also_doctors: set[int] | None = None,
    text: str | None = None,
    notify: Sequence[int] | None = None,
    old_doctor: int | None = None,
    created: bool = False,
) -> None:
    """Record a status change: the row (status, version), history, audit, drafts dropped, and the event.

    ``actor`` is a user, or a service account of the integration API: then history and audit name it in
    ``details["service_account"]`` and their ``actor_id`` is null. ``created``: ``appointment`` is a new appointment
    (flushed, with its first status): the change is from no status, and its version stays 1."""
    session = uow.session
    from_status: int | None = None if created else appointment.status
    appointment.status = int(to)
    if not created:
        appointment.version += 1
    appointment.updated_at = now
    actor_id = actor.user_id if isinstance(actor, Actor) else None
    if isinstance(actor, Integration):
        details = {**details, **actor.audit_details()}
    history = {"appointment_id": appointment.id, "at": now, "actor_id": actor_id, "from_status": from_status,
               "to_status": int(to), "details": details}  # fmt: skip
    await plain_rows.add(session, AppointmentHistory, history)
    await audit_now(
        session,
        at=now,
        actor_id=actor_id,
        action=f"appointment.{trigger.value}",
        entity="appointment",
        entity_id=appointment.id,
        details={"from": from_status, "to": int(to), **details},
    )
    if not created:  # a new appointment has no review drafts yet: no statement for them
        await session.execute(delete(ReviewDraft).where(ReviewDraft.appointment_id == appointment.id))
    if notify is None:
        patient_user = await session.scalar(_patient_user(appointment.patient_id))
        notify = (patient_user,) if patient_user is not None else ()
    if text and not created:
        told = [u for u in notify if u != actor_id]
        notices.leave(session, told, appointment_id=appointment.id, text=text, now=now)
    doctors = {appointment.doctor_id, *(also_doctors or ()), *((old_doctor,) if old_doctor else ())}
    topics = (
        appointment_topic(appointment.id),
        patient_topic(appointment.patient_id),
        ALL_APPOINTMENTS_TOPIC,
        *(doctor_topic(d) for d in sorted(doctors)),
    )
    uow.emit(
        DomainEvent(
            kind=transition_kind(trigger),
            topics=topics,
            data={
                "appointment_id": appointment.id,
                "from_status": from_status,
                "status": int(to),
                "version": appointment.version,
                "start": appointment.start_at.isoformat(),
                "when": format_local(appointment.start_at, "UTC"),
                # Who canceled (``patient`` or ``clinic``), a code, never free text: webhooks carry it.
                **({"canceled_by": details["by"]} if trigger is Trigger.CANCEL and details.get("by") else {}),
            },
            notify_user_ids=tuple(notify),
            notify_text=text,
        )
    )


def _patient_user(patient_id: int) -> Any:
    return select(Patient.user_id).where(Patient.id == patient_id)
