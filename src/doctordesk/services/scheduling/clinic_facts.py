"""The clinic's reference data as scheduling decisions read it (doctors, locations, work hours, fees), cached
for a few seconds per process, and a patient's policies."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import BigInteger, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain import events
from doctordesk.domain.events import CLINIC_TOPIC
from doctordesk.domain.review.coverage import Policy
from doctordesk.domain.review.fees import FeeRow
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, Directory, Hours, HoursException
from doctordesk.runtime import Runtime
from doctordesk.store.admin_tables import WorkHoursException
from doctordesk.store.tables import (
    DoctorProfile,
    FeeSchedule,
    InsurancePolicy,
    Location,
    User,
    WorkHours,
)

CLINIC_CACHE = "review.clinic"


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


async def cached_clinic(rt: Runtime, session: AsyncSession) -> Clinic:
    """The clinic's reference data, re-read at most every ``reference_cache_seconds`` (it changes rarely; a
    decision is still checked against the appointments and offers of the moment), and at once after an event on
    the clinic topic (``clinic_changed``, on any process of the bus): the cache is kept with the topic's mark read
    before it was filled, so a page whose stamp includes a clinic change never shows the data from before it."""
    ttl = rt.settings.reference_cache_seconds
    entry = rt.caches.get(CLINIC_CACHE)
    now = rt.monotonic()
    mark = rt.screens.revisions.stamp((CLINIC_TOPIC,))
    if ttl > 0 and entry is not None and now - entry[0] < ttl and entry[1] == mark:
        cached: Clinic = entry[2]
        return cached
    fresh = await clinic(session, horizon=timedelta(days=rt.settings.booking_horizon_days))
    rt.caches[CLINIC_CACHE] = (now, mark, fresh)
    return fresh


async def clinic_changed(rt: Runtime) -> None:
    """Reference data changed (committed): every screen showing it, on every process of the bus, renders again at
    its next poll, and the cache above is re-read."""
    rt.caches.pop(CLINIC_CACHE, None)
    await rt.publish([events.clinic_changed()])


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
