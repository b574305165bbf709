"""Loading what the Review and Approve rules need from storage, with the decider's rights applied in one place.

The overlap check reads one bounded range of the (doctor_id, start_at) indexes per proposal, so its cost does not
grow with the length of the doctor's history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import BigInteger, CompoundSelect, Select, and_, bindparam, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments import AppointmentView, Party, Place
from doctordesk.domain.coverage import Policy
from doctordesk.domain.errors import NotFound
from doctordesk.domain.fees import FeeRow
from doctordesk.domain.review import ReviewFacts
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling import DEFAULT_HORIZON, Busy, Directory, Hours, HoursException, Original
from doctordesk.domain.status import Status
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import Option
from doctordesk.store.admin_tables import WorkHoursException
from doctordesk.store.review_tables import AppointmentOffer, OfferState, ReviewDraft
from doctordesk.store.tables import (
    Appointment,
    DoctorProfile,
    FeeSchedule,
    InsurancePolicy,
    Location,
    Patient,
    User,
    UTCDateTime,
    WorkHours,
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


async def lock_schedules(session: AsyncSession, doctor_ids: Sequence[int]) -> None:
    """Serialise schedule changes per doctor: two sessions proposing the same doctor's time wait for each other
    (PostgreSQL row locks on the doctors' profiles, in id order so they cannot deadlock)."""
    if session.get_bind().dialect.name == "sqlite" or not doctor_ids:
        return
    await session.execute(
        select(DoctorProfile.user_id)
        .where(DoctorProfile.user_id.in_(sorted(set(doctor_ids))))
        .order_by(DoctorProfile.user_id)
        .with_for_update()
    )


def view_of(subject: Subject, c: Clinic) -> AppointmentView:
    a = subject.appointment
    return AppointmentView(
        id=a.id,
        status=Status(a.status),
        start=a.start_at,
        duration_minutes=a.duration_minutes,
        doctor=Party(a.doctor_id, subject.doctor_name),
        location=Place(a.location_id, c.location_names[a.location_id], c.directory.locations[a.location_id]),
        patient=Party(a.patient_id, subject.patient_name),
        service=a.service,
        chat_enabled=a.chat_enabled,
        disclaimer_required=a.disclaimer_required,
        prescription_needed=a.prescription_needed,
        version=a.version,
        updated_at=a.updated_at,
        request_note=a.request_note,
        decline_reason=a.decline_reason,
    )


@dataclass
class Clinic:
    """Reference data: doctors, locations, work hours and fees (small tables, read whole)."""

    directory: Directory
    can_prescribe: dict[int, bool]
    profile_timezones: dict[int, str | None]
    location_names: dict[int, str]
    work_hours: dict[tuple[int, int], list[Hours]]
    fee_rows: list[FeeRow]
    hours_exceptions: dict[int, list[HoursException]] = field(default_factory=dict)
    # How far ahead requests and offers may be (DOCTORDESK_BOOKING_HORIZON_DAYS).
    horizon: timedelta = DEFAULT_HORIZON

    def doctor_options(self) -> list[Option]:
        return [Option(str(i), name) for i, name in self.directory.doctors.items()]

    def location_options(self) -> list[Option]:
        return [Option(str(i), name) for i, name in self.location_names.items()]


async def cached_clinic(rt: Runtime, session: AsyncSession) -> Clinic:
    """The clinic's reference data, re-read at most every ``reference_cache_seconds`` (it changes rarely; a
    decision is still checked against the appointments and offers of the moment)."""
    ttl = rt.settings.reference_cache_seconds
    entry = rt.caches.get("review.clinic")
    now = rt.monotonic()
    if ttl > 0 and entry is not None and now - entry[0] < ttl:
        cached: Clinic = entry[1]
        return cached
    fresh = await clinic(session, horizon=timedelta(days=rt.settings.booking_horizon_days))
    rt.caches["review.clinic"] = (now, fresh)
    return fresh


async def clinic(session: AsyncSession, *, horizon: timedelta) -> Clinic:
    doctors = await session.execute(
        select(User.id, User.display_name, DoctorProfile.can_prescribe, DoctorProfile.timezone)
        .join(DoctorProfile, DoctorProfile.user_id == User.id)
        .where(User.active.is_(True))
        .order_by(User.display_name, User.id)
    )
    names: dict[int, str] = {}
    prescribe: dict[int, bool] = {}
    zones: dict[int, str | None] = {}
    for doctor_id, name, can_prescribe, zone in doctors:
        names[doctor_id], prescribe[doctor_id], zones[doctor_id] = name, can_prescribe, zone
    locations = (await session.execute(select(Location).order_by(Location.name, Location.id))).scalars().all()
    hours: dict[tuple[int, int], list[Hours]] = defaultdict(list)
    for h in (await session.execute(select(WorkHours))).scalars():
        hours[(h.doctor_id, h.location_id)].append(Hours(h.weekday, h.start_time, h.end_time))
    exceptions: dict[int, list[HoursException]] = defaultdict(list)
    for e in (
        await session.execute(select(WorkHoursException).where(WorkHoursException.removed_at.is_(None)))
    ).scalars():
        exceptions[e.doctor_id].append(HoursException(e.day, e.kind, e.location_id, e.start_time, e.end_time))
    fee_rows = [
        FeeRow(f.kind, f.doctor_id, f.location_id, f.amount_cents, f.percent, f.currency, f.effective_from, f.retired)
        for f in (await session.execute(select(FeeSchedule).order_by(FeeSchedule.id))).scalars()
    ]
    return Clinic(
        directory=Directory(doctors=names, locations={loc.id: loc.timezone for loc in locations}),
        can_prescribe=prescribe,
        profile_timezones=zones,
        location_names={loc.id: loc.name for loc in locations},
        work_hours=dict(hours),
        fee_rows=fee_rows,
        hours_exceptions=dict(exceptions),
        horizon=horizon,
    )


_POLICIES = (
    select(InsurancePolicy)
    .where(InsurancePolicy.patient_id == bindparam("patient", type_=BigInteger()))
    .order_by(InsurancePolicy.id)
)


async def policies_of(session: AsyncSession, patient_id: int) -> list[Policy]:
    rows = await session.execute(_POLICIES, {"patient": patient_id})
    return [Policy(p.valid_from, p.valid_to, p.network, p.exclusions, p.third_party_data) for p in rows.scalars().all()]


async def facts_for(
    session: AsyncSession, actor: Actor, a: Appointment, c: Clinic, location_timezone: str, now: datetime
) -> ReviewFacts:
    return ReviewFacts(
        appointment_id=a.id,
        status=Status(a.status),
        version=a.version,
        original=Original(a.doctor_id, a.location_id, a.start_at),
        duration_minutes=a.duration_minutes,
        service=a.service,
        location_timezone=location_timezone,
        disclaimer_required=a.disclaimer_required,
        prescription_needed=a.prescription_needed,
        directory=c.directory,
        can_prescribe=c.can_prescribe,
        profile_timezone=c.profile_timezones.get(actor.user_id),
        work_hours=c.work_hours,
        hours_exceptions=c.hours_exceptions,
        fee_rows=c.fee_rows,
        policies=await policies_of(session, a.patient_id),
        now=now,
        horizon=c.horizon,
    )


@lru_cache(maxsize=8)
def _busy_statement(k: int) -> CompoundSelect[int, datetime, int, str]:
    """The overlap query for ``k`` ranges, built once: bound parameters ``d{i}``, ``lo{i}``, ``hi{i}`` and
    ``appointment`` (a statement reused as is skips SQLAlchemy's per-call cache-key work)."""
    parts: list[Select[int, datetime, int, str]] = []
    appointment = bindparam("appointment", type_=BigInteger())
    approved = literal(int(Status.APPROVED))
    for i in range(k):
        doctor = bindparam(f"d{i}", type_=BigInteger())
        lo = bindparam(f"lo{i}", type_=UTCDateTime())
        hi = bindparam(f"hi{i}", type_=UTCDateTime())
        parts.append(
            select(
                Appointment.doctor_id, Appointment.start_at, Appointment.duration_minutes, literal("a").label("kind")
            ).where(
                Appointment.doctor_id == doctor,
                Appointment.start_at >= lo,
                Appointment.start_at < hi,
                (Appointment.status + 0) == approved,
                Appointment.id != appointment,
            )
        )
        parts.append(
            select(
                AppointmentOffer.doctor_id,
                AppointmentOffer.start_at,
                AppointmentOffer.duration_minutes,
                literal("o").label("kind"),
            ).where(
                AppointmentOffer.doctor_id == doctor,
                AppointmentOffer.start_at >= lo,
                AppointmentOffer.start_at < hi,
                AppointmentOffer.state == literal(OfferState.OPEN),
                AppointmentOffer.appointment_id != appointment,
            )
        )
    return union_all(*parts)


async def busy_times(
    session: AsyncSession, appointment_id: int, ranges: Sequence[tuple[int, datetime, datetime]]
) -> list[Busy]:
    """Approved appointments and open offers of other appointments whose start lies in one of ``ranges``
    (doctor, from, to). One bounded index range per entry; ``status + 0`` keeps the planner on the
    (doctor_id, start_at) index instead of the (doctor_id, status) one."""
    if not ranges:
        return []
    params: dict[str, Any] = {"appointment": appointment_id}
    for i, (doctor_id, lo, hi) in enumerate(ranges):
        params.update({f"d{i}": doctor_id, f"lo{i}": lo, f"hi{i}": hi})
    rows = await session.execute(_busy_statement(len(ranges)), params)
    out = []
    for doctor_id, start, minutes, kind in rows:
        what = Text("an approved appointment") if kind == "a" else Text("an offer sent for another appointment")
        out.append(Busy(doctor_id, start, start + timedelta(minutes=minutes), what))
    return out
