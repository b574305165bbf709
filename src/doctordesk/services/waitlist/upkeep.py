"""The waitlist's upkeep at the start of every round (docs/waitlist.md): times taken through the waitlist whose
request was not kept are given back, and entries past their last day end.

Both are one rule read at every round rather than a hook in every door that declines, cancels or moves an
appointment: the rounds are woken by every ``appointment.*`` event and run every few seconds besides."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Exists, and_, exists, or_, select, update

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.waitlist.rules import EntryState, OfferState
from doctordesk.runtime import Runtime
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.services.waitlist.entries import changed
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

# A request placed from the waitlist in one of these no longer holds its time: the doctor declined it, the
# patient cancelled it, or the doctor answered with other times.
NOT_KEPT = (Status.DECLINED, Status.CANCELED, Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK)


def _not_kept() -> Exists:
    """The condition "the accepted offer that took this time led to an appointment that no longer holds it":
    stated positively (an accepted offer whose appointment ended or moved), so a round running while an
    acceptance commits never reads the half-written claim as given back."""
    return exists(
        select(WaitlistOffer.id)
        .join(Appointment, Appointment.id == WaitlistOffer.appointment_id)
        .where(
            WaitlistOffer.id == WaitlistTime.taken_offer_id,
            WaitlistOffer.state == OfferState.ACCEPTED,
            or_(
                Appointment.status.in_([int(s) for s in NOT_KEPT]),
                Appointment.start_at != WaitlistTime.start_at,
                Appointment.doctor_id != WaitlistTime.doctor_id,
            ),
        )
    )


async def give_back(rt: Runtime, *, now: datetime) -> int:
    """Give back the coming times taken through the waitlist whose request (or moved appointment) no longer holds
    them, so the round offers them to the next matching patient; how many. A read first: most rounds find none."""
    still = and_(WaitlistTime.taken_offer_id.is_not(None), WaitlistTime.start_at > now, _not_kept())
    async with rt.db.read() as session:
        found = await session.scalar(select(WaitlistTime.id).where(still).limit(1))
    if found is None:
        return 0
    async with unit_of_work(rt) as uow:
        given = await uow.session.execute(update(WaitlistTime).where(still).values(taken_offer_id=None))
    return int(getattr(given, "rowcount", 0) or 0)


async def end_past_last_day(rt: Runtime, *, now: datetime) -> int:
    """End (state ``expired``) the waiting entries whose last day has passed in their location's zone, and their
    open offers; how many. The patient's screen drops them live (it lists what they wait for)."""
    async with rt.db.read() as session:
        # A day's slack either side of UTC: the location's zone decides below.
        rows = (
            await session.execute(
                select(
                    WaitlistEntry.id, WaitlistEntry.patient_id, WaitlistEntry.location_id, WaitlistEntry.until
                ).where(WaitlistEntry.state == EntryState.WAITING, WaitlistEntry.until < now.date() + timedelta(days=1))
            )
        ).all()
        if not rows:
            return 0
        zones = (await cached_clinic(rt, session)).directory.locations
    ended: dict[int, list[int]] = defaultdict(list)
    for entry_id, patient_id, location_id, until in rows:
        if now.astimezone(ZoneInfo(zones.get(location_id, "UTC"))).date() > until:
            ended[patient_id].append(entry_id)
    if not ended:
        return 0
    ids = [e for each in ended.values() for e in each]
    async with unit_of_work(rt) as uow:
        session = uow.session
        await session.execute(
            update(WaitlistEntry)
            .where(WaitlistEntry.id.in_(ids), WaitlistEntry.state == EntryState.WAITING)
            .values(state=EntryState.EXPIRED.value, ended_at=now)
        )
        await session.execute(
            update(WaitlistOffer)
            .where(WaitlistOffer.entry_id.in_(ids), WaitlistOffer.state == OfferState.OPEN)
            .values(state=OfferState.EXPIRED.value, answered_at=now)
        )
        for patient_id, entry_ids in ended.items():
            uow.emit(changed(patient_id, entry_ids=entry_ids, why="last-day"))
    return len(ids)
