"""Demo offers: the seeded pending-response appointments get the alternatives their doctor sent, so the patient's
offers screen and both pending codes show real data (5: all in network; 9: an out-of-network warning)."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import DomainError
from doctordesk.domain.review import coverage, fees
from doctordesk.domain.scheduling.suggestions import Hours
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.seed import feature_seeders as seed
from doctordesk.store.seed.calendar import DemoCalendar
from doctordesk.store.tables import Appointment, FeeSchedule, InsurancePolicy, Location, WorkHours


async def _calendar(session: AsyncSession, demo: seed.Demo) -> DemoCalendar:
    """The demo's hours and the times its appointments hold (store/seed/calendar.py)."""
    hours: dict[tuple[int, int], list[Hours]] = {}
    for h in (await session.execute(select(WorkHours))).scalars():
        hours.setdefault((h.doctor_id, h.location_id), []).append(Hours(h.weekday, h.start_time, h.end_time))
    zones = {loc.id: loc.timezone for loc in (await session.execute(select(Location))).scalars()}
    calendar = DemoCalendar(hours, zones)
    holding = select(Appointment).where(
        Appointment.id.in_(demo.appointments), Appointment.status.not_in([int(Status.CANCELED), int(Status.DECLINED)])
    )
    for a in (await session.execute(holding)).scalars():
        calendar.hold(a.doctor_id, a.start_at, a.duration_minutes)
    return calendar


async def _terms(session: AsyncSession, patient_id: int) -> list[coverage.Terms]:
    """The patient's policy terms (none when the insurer's data cannot be read)."""
    policies = (
        await session.execute(
            select(InsurancePolicy).where(InsurancePolicy.patient_id == patient_id).order_by(InsurancePolicy.id)
        )
    ).scalars()
    try:
        return coverage.terms(
            [coverage.Policy(p.valid_from, p.valid_to, p.network, p.exclusions, p.third_party_data) for p in policies]
        )
    except DomainError:
        return []


def _slots(a: Appointment, demo: seed.Demo) -> list[tuple[int, int]]:
    """(doctor, location) of each of the two offers of a pending appointment."""
    slots = [(a.doctor_id, a.location_id)]
    if a.status == Status.PENDING_RESPONSE_COVERAGE_RISK:
        # One alternative with Dr. Chen (outside some patients' networks) where she works.
        chen = demo.users["doctor3"]
        slots.append((chen, demo.locations["london"] if a.doctor_id != chen else a.location_id))
    else:
        slots.append((a.doctor_id, a.location_id))
    return slots


async def seed_offers(session: AsyncSession, demo: seed.Demo) -> None:
    rows = (
        await session.execute(
            select(Appointment)
            .where(
                Appointment.id.in_(demo.appointments),
                Appointment.status.in_([int(Status.PENDING_RESPONSE), int(Status.PENDING_RESPONSE_COVERAGE_RISK)]),
            )
            # In a stated order: the offers' ids are the same in every database however its rows lie on disk.
            .order_by(Appointment.status, Appointment.id)
        )
    ).scalars()
    fee_rows = [
        fees.FeeRow(f.kind, f.doctor_id, f.location_id, f.amount_cents, f.percent, f.currency)
        for f in (await session.execute(select(FeeSchedule).order_by(FeeSchedule.id))).scalars()
    ]
    calendar = await _calendar(session, demo)
    zones = calendar.zones
    for a in rows:
        terms = await _terms(session, a.patient_id)
        slots = _slots(a, demo)
        after: date | None = None  # the previous offer's day: each offer is on a day of its own
        for n, (doctor_id, location_id) in enumerate(slots, start=1):
            # The appointment's time, on the n-th day after it or later: where the doctor works and is free.
            tz = zones[location_id]
            local = a.start_at.astimezone(ZoneInfo(tz))
            day = local.date() + timedelta(days=n)
            if after is not None and day <= after:
                day = after + timedelta(days=1)
            start = calendar.place(
                doctor_id=doctor_id,
                location_id=location_id,
                day=day,
                at=local.time().replace(tzinfo=None),
                minutes=a.duration_minutes,
            )
            after = start.astimezone(ZoneInfo(tz)).date()
            local_day = start.astimezone(ZoneInfo(tz)).date()
            verdict = (
                coverage.evaluate(terms, day=local_day, doctor_id=doctor_id, location_id=location_id, service=a.service)
                if terms
                else coverage.Coverage()
            )
            f = fees.compute(
                fee_rows, doctor_id=doctor_id, location_id=location_id, start=start, timezone=tz, now=demo.now
            )
            session.add(
                AppointmentOffer(
                    appointment_id=a.id,
                    n=n,
                    doctor_id=doctor_id,
                    location_id=location_id,
                    start_at=start,
                    duration_minutes=a.duration_minutes,
                    doctor_fee_cents=f.doctor_fee_cents if f else None,
                    total_fee_cents=f.total_fee_cents if f else None,
                    currency=f.currency if f else "EUR",
                    coverage_warning=verdict.warning,
                    state=OfferState.OPEN,
                    created_at=demo.now - timedelta(days=1),
                )
            )
    await session.flush()


seed.EXTRA_SEEDERS.append(seed_offers)
