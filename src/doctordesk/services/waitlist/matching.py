"""Freed times offered to waiting patients (docs/waitlist.md): one round expires lapsed offers, finds the free times
that suit someone waiting and offers each to the matching patients in order of waiting, by the clinic's policy.

A round is driven by the waitlist's worker (``workers/waitlist.py``): woken by every change that can free a time
(an appointment's status or time, the clinic's hours, the waitlist itself) and every few seconds besides. Several
instances may run rounds at once: an offer is one row per (entry, time), so a second offer of the same time to the
same entry fails on its unique key and is skipped."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import exists, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.events import DomainEvent, patient_topic, user_topic
from doctordesk.domain.scheduling.booking import VISIT_MINUTES
from doctordesk.domain.scheduling.free_times import MAX_DAYS
from doctordesk.domain.texts import Moment, Text
from doctordesk.domain.waitlist.rules import (
    EntryState,
    Mode,
    OfferState,
    Policy,
    Waiting,
    Wish,
    in_order,
    matches,
    offer_expiry,
)
from doctordesk.runtime import Runtime
from doctordesk.services.appointments import notices
from doctordesk.services.booking.free_times import visit_times
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.services.waitlist.entries import GONE, OFFERED, waitlist_topic
from doctordesk.services.waitlist.policy import policy
from doctordesk.services.waitlist.upkeep import end_past_last_day, give_back
from doctordesk.store import plain_rows
from doctordesk.store.tables import Appointment, Patient
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

Slot = tuple[int, int, datetime]  # doctor, location, start


@dataclass
class Round:
    """What one round did."""

    offered: int = 0
    expired: int = 0
    offers: list[int] = field(default_factory=list)


async def run_round(rt: Runtime) -> Round:
    """Expire the lapsed offers, then offer every free time that suits someone waiting (docs/waitlist.md). A round
    with nothing to look after (``_idle``) is that one read."""
    now = rt.clock.now()
    if await _idle(rt, now):
        return Round()
    await end_past_last_day(rt, now=now)
    await give_back(rt, now=now)
    result = Round(expired=await expire_lapsed(rt, now=now))
    pol = await policy(rt)
    waiting, past, open_slots, taken = await _state(rt, now)
    if not waiting:
        return result
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    free = await _free_slots(rt, c, waiting, now=now)
    busy_entries = {entry_id for entry_id, _ in open_slots}
    open_times = {slot for _, slot in open_slots}
    for w in in_order(waiting):
        if w.id in busy_entries:
            continue  # one open offer per entry at a time
        for slot in free:
            doctor_id, location_id, start = slot
            if slot in taken or (w.id, slot) in past:
                continue
            if pol.mode is Mode.ONE_AT_A_TIME and slot in open_times:
                continue  # offered to someone before them; it comes to them if it lapses
            timezone = c.directory.locations[location_id]
            if not matches(
                w, doctor_id=doctor_id, location_id=location_id, start=start, minutes=VISIT_MINUTES, timezone=timezone
            ):
                continue
            offer_id = await _offer(rt, c, w, slot, pol=pol, now=now)
            if offer_id is not None:
                result.offered += 1
                result.offers.append(offer_id)
                open_times.add(slot)
            break
    return result


async def _idle(rt: Runtime, now: datetime) -> bool:
    """Nothing for a round to do, in one statement: no entry waits (nothing to end at its last day, no one to offer
    a time to), no offer is open (none to expire) and no coming time was taken through the waitlist (none to give
    back). Most rounds of most clinics find this."""
    anything = or_(
        exists(select(WaitlistEntry.id).where(WaitlistEntry.state == EntryState.WAITING)),
        exists(select(WaitlistOffer.id).where(WaitlistOffer.state == OfferState.OPEN)),
        exists(select(WaitlistTime.id).where(WaitlistTime.taken_offer_id.is_not(None), WaitlistTime.start_at > now)),
    )
    async with rt.db.read() as session:
        return not await session.scalar(select(anything))


async def _state(
    rt: Runtime, now: datetime
) -> tuple[list[Waiting], set[tuple[int, Slot]], set[tuple[int, Slot]], set[Slot]]:
    """Who waits (with the start of the appointment each holds), which times each entry was offered before, the
    open offers (entry, time) and the times already taken through the waitlist."""
    async with rt.db.read() as session:
        rows = (
            await session.execute(
                select(WaitlistEntry, Appointment.start_at)
                .outerjoin(Appointment, Appointment.id == WaitlistEntry.appointment_id)
                .where(WaitlistEntry.state == EntryState.WAITING, WaitlistEntry.until >= now.date() - timedelta(days=1))
            )
        ).all()
        offers = (
            await session.execute(
                select(WaitlistOffer.entry_id, WaitlistOffer.state, WaitlistTime)
                .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
                .join(WaitlistEntry, WaitlistEntry.id == WaitlistOffer.entry_id)
                .where(WaitlistEntry.state == EntryState.WAITING, WaitlistTime.start_at > now)
            )
        ).all()
        taken_rows = (
            await session.execute(
                select(WaitlistTime).where(WaitlistTime.taken_offer_id.is_not(None), WaitlistTime.start_at > now)
            )
        ).scalars()
        taken = {(t.doctor_id, t.location_id, t.start_at) for t in taken_rows}
    waiting = [
        Waiting(
            e.id,
            e.patient_id,
            Wish(e.doctor_id, e.location_id, e.service, e.until, e.days, e.time_from, e.time_to, e.appointment_id),
            e.created_at,
            held,
        )
        for e, held in rows
    ]
    past: set[tuple[int, Slot]] = set()
    open_slots: set[tuple[int, Slot]] = set()
    for entry_id, state, t in offers:
        slot = (t.doctor_id, t.location_id, t.start_at)
        if state != OfferState.GONE:  # taken from them: it comes to them again if it is given back
            past.add((entry_id, slot))
        if state == OfferState.OPEN:
            open_slots.add((entry_id, slot))
    return waiting, past, open_slots, taken


async def _free_slots(rt: Runtime, c: Clinic, waiting: list[Waiting], *, now: datetime) -> list[Slot]:
    """The free visit times, earliest first, of every doctor and place someone waits for, up to the last day any
    of them waits for (read in spans of ``MAX_DAYS``)."""
    last: dict[tuple[int, int], date] = defaultdict(lambda: date.min)
    for w in waiting:
        doctors = (
            [w.wish.doctor_id]
            if w.wish.doctor_id is not None
            else [d for d, loc in c.work_hours if loc == w.wish.location_id]
        )
        for d in doctors:
            key = (d, w.wish.location_id)
            if key in c.work_hours:
                last[key] = max(last[key], w.wish.until)
    slots: list[Slot] = []
    for (doctor_id, location_id), until in sorted(last.items()):
        zone = ZoneInfo(c.directory.locations[location_id])
        day = now.astimezone(zone).date()
        while day <= until:
            end = min(until, day + timedelta(days=MAX_DAYS - 1))
            _, starts = await visit_times(rt, doctor_id=doctor_id, location_id=location_id, first_day=day, last_day=end)
            slots.extend((doctor_id, location_id, s) for s in starts)
            day = end + timedelta(days=1)
    slots.sort(key=lambda s: (s[2], s[0], s[1]))
    return slots


async def _offer(rt: Runtime, c: Clinic, w: Waiting, slot: Slot, *, pol: Policy, now: datetime) -> int | None:
    """Offer ``slot`` to the entry ``w``: the offer, the patient's notice, push and live update, in one
    transaction; None when another round offered it meanwhile."""
    doctor_id, location_id, start = slot
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            time_id = await session.scalar(
                select(WaitlistTime.id).where(WaitlistTime.doctor_id == doctor_id, WaitlistTime.start_at == start)
            )
            if time_id is None:
                time_id = await plain_rows.add_returning_id(
                    session,
                    WaitlistTime,
                    {
                        "doctor_id": doctor_id,
                        "location_id": location_id,
                        "start_at": start,
                        "duration_minutes": VISIT_MINUTES,
                        "found_at": now,
                        "taken_offer_id": None,
                    },
                )
            expires = offer_expiry(pol, now=now, start=start)
            offer_id = await _open_offer(session, w, time_id, now=now, expires=expires)
            if offer_id is None:
                return None
            user_id = await session.scalar(select(Patient.user_id).where(Patient.id == w.patient_id))
            when = Moment(start, c.directory.locations[location_id])
            text = Text(
                "An earlier time is free: {when} with {doctor} at {place}. Accept it on your waitlist.",
                when=when,
                doctor=c.directory.doctors[doctor_id],
                place=c.location_names[location_id],
            )
            told = (user_id,) if user_id is not None else ()
            notices.leave(session, told, appointment_id=w.wish.appointment_id, text=text, now=now)
            topics = (patient_topic(w.patient_id), waitlist_topic(), *(user_topic(u) for u in told))
            data = {
                "offer_id": offer_id,
                "entry_id": w.id,
                "patient_id": w.patient_id,
                "doctor_id": doctor_id,
                "location_id": location_id,
                "start": start.isoformat(),
                "expires_at": expires.isoformat(),
                "mode": pol.mode.value,
                "service": w.wish.service,
            }
            uow.emit(DomainEvent(OFFERED, topics, data=data, notify_user_ids=told, notify_text=text))
    except IntegrityError:
        return None
    return offer_id


async def _open_offer(
    session: AsyncSession, w: Waiting, time_id: int, *, now: datetime, expires: datetime
) -> int | None:
    """A new open offer of the time to the entry; or its offer that ended ``gone`` (the time was taken, then
    given back) opened again, one row per (entry, time). None when another round opened it meanwhile."""
    before = await session.scalar(
        select(WaitlistOffer.id).where(WaitlistOffer.entry_id == w.id, WaitlistOffer.time_id == time_id)
    )
    if before is None:
        return await plain_rows.add_returning_id(
            session,
            WaitlistOffer,
            {
                "entry_id": w.id,
                "time_id": time_id,
                "patient_id": w.patient_id,
                "state": OfferState.OPEN.value,
                "offered_at": now,
                "expires_at": expires,
                "answered_at": None,
                "appointment_id": None,
                "moved": False,
            },
        )
    reopened = await session.execute(
        update(WaitlistOffer)
        .where(WaitlistOffer.id == before, WaitlistOffer.state == OfferState.GONE)
        .values(state=OfferState.OPEN.value, offered_at=now, expires_at=expires, answered_at=None)
    )
    return before if getattr(reopened, "rowcount", 0) == 1 else None


async def expire_lapsed(rt: Runtime, *, now: datetime) -> int:
    """End the open offers whose time to answer has run out (the time goes to the next in the same round); how
    many. The patient's waitlist screen updates live. A read first: most rounds find nothing to expire, and a
    round writes nothing then."""
    async with rt.db.read() as session:
        lapsed = await session.scalar(
            select(WaitlistOffer.id)
            .where(WaitlistOffer.state == OfferState.OPEN, WaitlistOffer.expires_at <= now)
            .limit(1)
        )
    if lapsed is None:
        return 0
    async with unit_of_work(rt) as uow:
        rows = (
            await uow.session.execute(
                update(WaitlistOffer)
                .where(WaitlistOffer.state == OfferState.OPEN, WaitlistOffer.expires_at <= now)
                .values(state=OfferState.EXPIRED.value, answered_at=now)
                .returning(WaitlistOffer.id, WaitlistOffer.patient_id)
            )
        ).all()
        for offer_id, patient_id in rows:
            uow.emit(
                DomainEvent(
                    GONE,
                    (patient_topic(patient_id), waitlist_topic()),
                    data={"offer_id": offer_id, "patient_id": patient_id, "why": "expired"},
                )
            )
    return len(rows)
