"""What is already taken in doctors' schedules: approved appointments, open offers and held times (FHIR's
``$hold``, and the requests its ``$book`` placed while they wait; docs/fhir.md#scheduling) in a time range, and the
per-doctor locks that serialise schedule changes.

The overlap check reads one bounded range of the (doctor_id, start_at) indexes per proposal, so its cost does not
grow with the length of the doctor's history.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    CompoundSelect,
    Select,
    and_,
    bindparam,
    case,
    cast,
    literal,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.scheduling.suggestions import Busy
from doctordesk.domain.texts import N_, Text
from doctordesk.store.fhir_tables import SlotHold
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import (
    Appointment,
    DoctorProfile,
    UTCDateTime,
)


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


@lru_cache(maxsize=8)
def _busy_statement(k: int) -> CompoundSelect[int, datetime, int, str, datetime | None]:
    """The overlap query for ``k`` ranges, built once: bound parameters ``d{i}``, ``lo{i}``, ``hi{i}``,
    ``appointment`` and ``now`` (a statement reused as is skips SQLAlchemy's per-call cache-key work)."""
    parts: list[Select[int, datetime, int, str, datetime | None]] = []
    never = cast(null(), UTCDateTime()).label("expires")  # an appointment or an offer ends only by an event
    appointment = bindparam("appointment", type_=BigInteger())
    now = bindparam("now", type_=UTCDateTime())
    approved = literal(int(Status.APPROVED))
    for i in range(k):
        doctor = bindparam(f"d{i}", type_=BigInteger())
        lo = bindparam(f"lo{i}", type_=UTCDateTime())
        hi = bindparam(f"hi{i}", type_=UTCDateTime())
        parts.append(
            select(
                Appointment.doctor_id,
                Appointment.start_at,
                Appointment.duration_minutes,
                literal("a").label("kind"),
                never,
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
                never,
            ).where(
                AppointmentOffer.doctor_id == doctor,
                AppointmentOffer.start_at >= lo,
                AppointmentOffer.start_at < hi,
                AppointmentOffer.state == literal(OfferState.OPEN),
                AppointmentOffer.appointment_id != appointment,
            )
        )
        parts.append(_holds(doctor, lo, hi, appointment, now))
    return union_all(*parts)


def _holds(
    doctor: Any, lo: Any, hi: Any, appointment: Any, now: Any
) -> Select[int, datetime, int, str, datetime | None]:
    """Held times: a hold not yet booked until it expires (``expires``); a booked one while its request waits for
    the doctor (once decided, the appointment or its offers take the time, or nothing does)."""
    requested = literal(int(Status.REQUESTED))
    expires = case((SlotHold.appointment_id.is_(None), SlotHold.expires_at), else_=null()).label("expires")
    return (
        select(SlotHold.doctor_id, SlotHold.start_at, SlotHold.duration_minutes, literal("h").label("kind"), expires)
        .outerjoin(Appointment, Appointment.id == SlotHold.appointment_id)
        .where(
            SlotHold.doctor_id == doctor,
            SlotHold.start_at >= lo,
            SlotHold.start_at < hi,
            or_(
                and_(SlotHold.appointment_id.is_(None), SlotHold.expires_at > now),
                and_(Appointment.status == requested, Appointment.id != appointment),
            ),
        )
    )


_WHAT = {
    "a": N_("an approved appointment"),
    "o": N_("an offer sent for another appointment"),
    "h": N_("a time held for another booking"),
}


async def busy_times(
    session: AsyncSession, appointment_id: int, ranges: Sequence[tuple[int, datetime, datetime]], *, now: datetime
) -> list[Busy]:
    """Approved appointments, open offers of other appointments and held times (holds unexpired at ``now``) whose
    start lies in one of ``ranges`` (doctor, from, to). One bounded index range per entry; ``status + 0`` keeps the
    planner on the (doctor_id, start_at) index instead of the (doctor_id, status) one."""
    if not ranges:
        return []
    params: dict[str, Any] = {"appointment": appointment_id, "now": now}
    for i, (doctor_id, lo, hi) in enumerate(ranges):
        params.update({f"d{i}": doctor_id, f"lo{i}": lo, f"hi{i}": hi})
    rows = await session.execute(_busy_statement(len(ranges)), params)
    out = []
    for doctor_id, start, minutes, kind, expires in rows:
        what = Text(_WHAT[kind])
        end = start + timedelta(minutes=minutes)
        out.append(Busy(doctor_id, start, end, what, tentative=kind != "a", expires=expires))
    return out
