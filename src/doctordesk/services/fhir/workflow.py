"""What an Appointment shows of its workflow beyond its row (docs/fhir.md#appointment): who ended a cancelled
appointment and why (the history's record of the cancel), and the open offers of a pending one. Read for a page
of appointments at once (two queries), so a search costs the same whatever the statuses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, AppointmentHistory, Location, User

# The extension a pending Appointment lists each open offer in (docs/fhir.md#appointment).
OFFER_EXTENSION = "urn:doctordesk:fhir:offered-time"
REJECTED_OFFERS = "The patient rejected the offered times."


@dataclass(frozen=True, slots=True)
class Offer:
    id: int
    n: int
    start_at: datetime
    duration_minutes: int
    doctor_id: int
    doctor_name: str
    location: Location


@dataclass(slots=True)
class Facts:
    ended_by: str | None = None  # fhir.CANCELED_BY_PATIENT, CANCELED_BY_CLINIC or DECLINED_BY_DOCTOR
    reason: str | None = None
    offers: list[Offer] = field(default_factory=list)  # open ones, by n


def _ended(details: dict[str, Any]) -> tuple[str | None, str | None]:
    """(who, reason) from the history's record of a cancel."""
    if details.get("action") == "reject-offers":
        return fhir_mapping.CANCELED_BY_PATIENT, REJECTED_OFFERS
    by = details.get("by")
    reason = details.get("reason")
    who = {"patient": fhir_mapping.CANCELED_BY_PATIENT, "clinic": fhir_mapping.CANCELED_BY_CLINIC}.get(str(by))
    return who, str(reason) if isinstance(reason, str) and reason else None


async def facts_for(session: AsyncSession, appointments: Sequence[Appointment]) -> dict[int, Facts]:
    """The workflow facts of these appointments (those without any are absent)."""
    out: dict[int, Facts] = {}
    canceled = [a.id for a in appointments if a.status == Status.CANCELED]
    declined = [a.id for a in appointments if a.status == Status.DECLINED]
    pending = [a.id for a in appointments if fhir_mapping.APPOINTMENT_STATUS[Status(a.status)] == "pending"]
    for appointment_id in declined:
        out[appointment_id] = Facts(ended_by=fhir_mapping.DECLINED_BY_DOCTOR)
    if canceled:
        rows = await session.execute(
            select(AppointmentHistory.appointment_id, AppointmentHistory.details)
            .where(AppointmentHistory.appointment_id.in_(canceled), AppointmentHistory.to_status == Status.CANCELED)
            .order_by(AppointmentHistory.id)
        )
        for appointment_id, details in rows.all():
            who, reason = _ended(details or {})
            out[appointment_id] = Facts(ended_by=who, reason=reason)
    if pending:
        rows = await session.execute(
            select(AppointmentOffer, User.display_name, Location)
            .join(User, User.id == AppointmentOffer.doctor_id)
            .join(Location, Location.id == AppointmentOffer.location_id)
            .where(AppointmentOffer.appointment_id.in_(pending), AppointmentOffer.state == OfferState.OPEN)
            .order_by(AppointmentOffer.appointment_id, AppointmentOffer.n)
        )
        for o, name, loc in rows.all():
            offer = Offer(o.id, o.n, o.start_at, o.duration_minutes, o.doctor_id, name, loc)
            out.setdefault(o.appointment_id, Facts()).offers.append(offer)
    return out
