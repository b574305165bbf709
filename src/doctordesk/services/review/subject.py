"""The appointment a Review and Approve action is about, read with the decider's rights applied in one place, and
the facts the assessment needs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlalchemy import BigInteger, Select, and_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView, Place
from doctordesk.domain.errors import NotFound
from doctordesk.domain.review.assessment import ReviewFacts
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling.suggestions import Original
from doctordesk.domain.texts import N_
from doctordesk.services.appointments.reading import appointment_view
from doctordesk.services.scheduling.clinic_facts import Clinic, policies_of
from doctordesk.store.review_tables import ReviewDraft
from doctordesk.store.tables import (
    Appointment,
    Patient,
    User,
)


def may_decide(actor: Actor, appointment: Appointment) -> bool:
    """Only the appointment's doctor decides on it (an admin administers the clinic; it is no doctor)."""
    return actor.role is Role.DOCTOR and actor.user_id == appointment.doctor_id


def may_answer(actor: Actor, appointment: Appointment) -> bool:
    """Only the appointment's patient answers its offers."""
    return actor.role is Role.PATIENT and actor.patient_id == appointment.patient_id


async def appointment_for(
    session: AsyncSession, actor: Actor, appointment_id: int, *, lock: bool = False, patient: bool = False
) -> Appointment:
    """The appointment if the actor may act on it (as decider, or as its patient); NotFound otherwise.

    ``lock`` takes the row lock (PostgreSQL ``FOR UPDATE``; SQLite writers are already serialised by
    ``BEGIN IMMEDIATE``), so two decisions on one appointment run one after the other.
    """
    query = select(Appointment).where(Appointment.id == appointment_id)
    if lock:
        query = query.with_for_update()
    appointment = (await session.execute(query)).scalar_one_or_none()
    allowed = may_answer if patient else may_decide
    if appointment is None or not allowed(actor, appointment):
        raise NotFound(N_("Appointment not found."))
    return appointment


@dataclass
class Subject:
    """An appointment the actor may decide on, read with what a decision needs beside it (one query)."""

    appointment: Appointment
    draft: ReviewDraft | None  # the actor's own draft on it
    doctor_name: str
    patient_name: str
    patient_user_id: int | None  # the patient's account, for notifications (None: no account)

    @property
    def notify(self) -> tuple[int, ...]:
        """Whom a decision notifies: the patient's account, when there is one."""
        return (self.patient_user_id,) if self.patient_user_id is not None else ()


@lru_cache(maxsize=2)
def _subject_statement(lock: bool) -> Select[Appointment, ReviewDraft, str, str, int | None]:
    """The subject query, built once per variant with bound parameters ``appointment`` and ``user`` (a statement
    reused as is skips SQLAlchemy's per-call construction and cache-key work on the decision path)."""
    query = (
        select(Appointment, ReviewDraft, User.display_name, Patient.name, Patient.user_id)
        .join(User, User.id == Appointment.doctor_id)
        .join(Patient, Patient.id == Appointment.patient_id)
        .outerjoin(
            ReviewDraft,
            and_(
                ReviewDraft.appointment_id == Appointment.id,
                ReviewDraft.user_id == bindparam("user", type_=BigInteger()),
            ),
        )
        .where(Appointment.id == bindparam("appointment", type_=BigInteger()))
    )
    return query.with_for_update(of=Appointment) if lock else query


async def subject_for(session: AsyncSession, actor: Actor, appointment_id: int, *, lock: bool = False) -> Subject:
    """``appointment_for`` (decider's rights, ``lock``) plus the actor's draft and the parties' names and the
    patient's account: one round trip where the screen and the decisions made four."""
    params = {"appointment": appointment_id, "user": actor.user_id}
    row = (await session.execute(_subject_statement(lock), params)).one_or_none()
    if row is None or not may_decide(actor, row[0]):
        raise NotFound(N_("Appointment not found."))
    return Subject(row[0], row[1], doctor_name=row[2], patient_name=row[3], patient_user_id=row[4])


def view_of(subject: Subject, clinic: Clinic) -> AppointmentView:
    a = subject.appointment
    place = Place(a.location_id, clinic.location_names[a.location_id], clinic.directory.locations[a.location_id])
    return appointment_view(a, subject.doctor_name, place, subject.patient_name)


async def facts_for(
    session: AsyncSession, actor: Actor, appointment: Appointment, clinic: Clinic, location_timezone: str, now: datetime
) -> ReviewFacts:
    return ReviewFacts(
        appointment_id=appointment.id,
        status=Status(appointment.status),
        version=appointment.version,
        original=Original(appointment.doctor_id, appointment.location_id, appointment.start_at),
        duration_minutes=appointment.duration_minutes,
        service=appointment.service,
        location_timezone=location_timezone,
        disclaimer_required=appointment.disclaimer_required,
        prescription_needed=appointment.prescription_needed,
        directory=clinic.directory,
        can_prescribe=clinic.can_prescribe,
        profile_timezone=clinic.profile_timezones.get(actor.user_id),
        work_hours=clinic.work_hours,
        hours_exceptions=clinic.hours_exceptions,
        fee_rows=clinic.fee_rows,
        policies=await policies_of(session, appointment.patient_id),
        now=now,
        horizon=clinic.horizon,
    )
