"""Reading a doctor's feed entries: two bounded index ranges, the doctor's appointments by start time
(``ix_appointments_doctor_start``) and the doctor's offers by start time (``ix_appointment_offers_doctor_start``),
each joined to its location (and an offer to its appointment)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain import calendar_feed as rules
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.calendar_feed import FeedEntry, Kind
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, Location


async def read_entries(session: AsyncSession, doctor_id: int, window: tuple[datetime, datetime]) -> list[FeedEntry]:
    """The doctor's events starting in ``window``: booked and requested appointments, and open offers of
    appointments awaiting the patient's answer; in start order, at most ``MAX_EVENTS``."""
    lo, hi = window
    shown = sorted(int(s) for s in rules.SHOWN_STATUSES)
    pending = sorted(int(s) for s in rules.PENDING_STATUSES)
    own = await session.execute(
        select(Appointment, Location)
        .join(Location, Location.id == Appointment.location_id)
        .where(
            Appointment.doctor_id == doctor_id,
            Appointment.start_at >= lo,
            Appointment.start_at < hi,
            Appointment.status.in_(shown),
        )
        .order_by(Appointment.start_at, Appointment.id)
        .limit(rules.MAX_EVENTS)
    )
    entries = [
        FeedEntry(
            kind=Kind.APPOINTMENT if Status(a.status) in rules.CONFIRMED_STATUSES else Kind.REQUEST,
            appointment_id=a.id,
            status=Status(a.status),
            offer_n=None,
            start=a.start_at,
            duration_minutes=a.duration_minutes,
            timezone=loc.timezone,
            service=a.service,
            location_name=loc.name,
            location_address=loc.address,
            sequence=max(0, a.version - 1),
            created=a.created_at,
            modified=a.updated_at,
        )
        for a, loc in own.all()
    ]
    offers = await session.execute(
        select(AppointmentOffer, Appointment.status, Appointment.service, Location)
        .join(Appointment, Appointment.id == AppointmentOffer.appointment_id)
        .join(Location, Location.id == AppointmentOffer.location_id)
        .where(
            AppointmentOffer.doctor_id == doctor_id,
            AppointmentOffer.start_at >= lo,
            AppointmentOffer.start_at < hi,
            AppointmentOffer.state == OfferState.OPEN,
            Appointment.status.in_(pending),
        )
        .order_by(AppointmentOffer.start_at, AppointmentOffer.id)
        .limit(rules.MAX_EVENTS)
    )
    entries += [
        FeedEntry(
            kind=Kind.OFFER,
            appointment_id=o.appointment_id,
            status=Status(status),
            offer_n=o.n,
            start=o.start_at,
            duration_minutes=o.duration_minutes,
            timezone=loc.timezone,
            service=service,
            location_name=loc.name,
            location_address=loc.address,
            sequence=0,
            created=o.created_at,
            modified=o.created_at,
        )
        for o, status, service, loc in offers.all()
    ]
    entries.sort(key=lambda e: (e.start, e.appointment_id, e.offer_n or 0))
    return entries[: rules.MAX_EVENTS]
