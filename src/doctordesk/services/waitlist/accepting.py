"""An offered time answered (docs/waitlist.md): accepted, it becomes a request exactly like a booking (the doctor's
Review and Approve, marked "from the waitlist"), or it moves the patient's approved appointment at once when the
clinic allows direct moves; declined, it goes to the next.

Exactly one patient wins a time, however many accept at once: the accepting transaction claims the time with a
conditional UPDATE (``taken_offer_id`` set only where it is still empty) before anything else is written, and the
others find it taken. The winner's transaction also ends everyone else's open offer of that time, and they are told
at once (their screens and a notice)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, NotFound, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    DomainEvent,
    appointment_topic,
    doctor_topic,
    patient_topic,
    user_topic,
)
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.domain.waitlist.rules import EntryState, OfferState, Policy
from doctordesk.runtime import Runtime
from doctordesk.services.appointments import notices
from doctordesk.services.audit.entries import audit_now
from doctordesk.services.booking.cover import refuse_uncovered
from doctordesk.services.lifecycle.placing import RequestInput, check_time, place_request
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.services.waitlist.entries import ACCEPTED, GONE, changed, patient_of, waitlist_topic
from doctordesk.services.waitlist.policy import policy
from doctordesk.store import plain_rows
from doctordesk.store.tables import Appointment, AppointmentHistory, Patient
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

MOVED_EVENT = EventKind.APPOINTMENT_WAITLIST_MOVE


class TimeGone(AppointmentChanged):
    """The time offered is no longer to be had (another patient took it, it lapsed or is no longer free): the
    spec's APPOINTMENT_CHANGED, with the waitlist's words."""

    default_message = N_("This time is no longer available: another patient took it or it was booked meanwhile.")


@dataclass(frozen=True, slots=True)
class Accepted:
    appointment_id: int
    moved: bool
    start: datetime
    timezone: str


async def _offer_rows(
    session: AsyncSession, offer_id: int, patient_id: int
) -> tuple[WaitlistOffer, WaitlistTime, WaitlistEntry]:
    row = (
        await session.execute(
            select(WaitlistOffer, WaitlistTime, WaitlistEntry)
            .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
            .join(WaitlistEntry, WaitlistEntry.id == WaitlistOffer.entry_id)
            .where(WaitlistOffer.id == offer_id)
        )
    ).one_or_none()
    if row is None or row[0].patient_id != patient_id:
        raise NotFound(N_("Offer not found."))
    return row[0], row[1], row[2]


async def accept(rt: Runtime, actor: Actor, offer_id: int) -> Accepted:
    """Accept an offered time. Refused with APPOINTMENT_CHANGED (``TimeGone``, nothing written) when the offer is
    no longer open or another patient took the time first; 404 for an offer that is not the patient's."""
    patient_id = patient_of(actor)
    now = rt.clock.now()
    pol = await policy(rt)
    await _refuse_uncovered(rt, offer_id, patient_id)
    try:
        async with unit_of_work(rt) as uow:
            return await _accept(rt, uow, actor, offer_id, patient_id=patient_id, pol=pol, now=now)
    except ValidationFailed:
        # The time broke a scheduling rule by now (booked, hours changed): it is gone for this patient.
        await _end_offer(rt, offer_id, patient_id, now=now)
        raise TimeGone() from None


async def _refuse_uncovered(rt: Runtime, offer_id: int, patient_id: int) -> None:
    """The booking screen's insurance check (``booking.cover.refuse_uncovered``) on the offered time, before
    anything is written: an offer can not bypass a coverage rule; the booking's error, and the offer stays open
    (the patient may decline it). 404 first for an offer that is not theirs; one no longer open is left to the
    transaction, which refuses it as gone."""
    async with rt.db.read() as session:
        offer, freed, entry = await _offer_rows(session, offer_id, patient_id)
    if offer.state != OfferState.OPEN:
        return
    req = RequestInput(
        patient_id, freed.doctor_id, freed.location_id, entry.service, freed.start_at, freed.duration_minutes, ""
    )
    await refuse_uncovered(rt, req)


async def _accept(
    rt: Runtime, uow: UnitOfWork, actor: Actor, offer_id: int, *, patient_id: int, pol: Policy, now: datetime
) -> Accepted:
    session = uow.session
    offer, freed, entry = await _offer_rows(session, offer_id, patient_id)
    if offer.state != OfferState.OPEN or offer.expires_at <= now:
        raise TimeGone()
    claimed = await session.execute(
        update(WaitlistTime)
        .where(WaitlistTime.id == freed.id, WaitlistTime.taken_offer_id.is_(None))
        .values(taken_offer_id=offer.id)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        raise TimeGone()
    c = await cached_clinic(rt, session)
    held = await session.get(Appointment, entry.appointment_id) if entry.appointment_id is not None else None
    moved = (
        pol.direct_move
        and held is not None
        and Status(held.status) is Status.APPROVED
        and held.doctor_id == freed.doctor_id
        and held.service == entry.service
    )
    if moved:
        assert held is not None
        await _move(uow, c, actor, held, freed, now=now)
        appointment_id = held.id
    else:
        req = RequestInput(
            patient_id, freed.doctor_id, freed.location_id, entry.service, freed.start_at, freed.duration_minutes, ""
        )
        placed = await place_request(rt, uow, actor, req, now=now)
        appointment_id = placed.appointment.id
    await session.execute(
        update(WaitlistOffer)
        .where(WaitlistOffer.id == offer.id)
        .values(state=OfferState.ACCEPTED.value, answered_at=now, appointment_id=appointment_id, moved=moved)
    )
    await session.execute(
        update(WaitlistEntry).where(WaitlistEntry.id == entry.id).values(state=EntryState.SERVED.value, ended_at=now)
    )
    await _tell_the_others(uow, c, freed, winner=offer.id, now=now)
    await audit_now(
        session,
        at=now,
        actor_id=actor.user_id,
        action="waitlist.accept",
        entity="waitlist_offer",
        entity_id=offer.id,
        details={"appointment": appointment_id, "moved": moved},
    )
    data = {
        "offer_id": offer.id,
        "entry_id": entry.id,
        "patient_id": patient_id,
        "appointment_id": appointment_id,
        "doctor_id": freed.doctor_id,
        "location_id": freed.location_id,
        "start": freed.start_at.isoformat(),
        "moved": moved,
    }
    uow.emit(DomainEvent(ACCEPTED, (patient_topic(patient_id), waitlist_topic()), data=data))
    return Accepted(appointment_id, moved, freed.start_at, c.directory.locations[freed.location_id])


async def _move(
    uow: UnitOfWork, c: Clinic, actor: Actor, a: Appointment, freed: WaitlistTime, *, now: datetime
) -> None:
    """Move the approved appointment ``a`` to the freed time at once (the clinic allows direct moves): the same
    scheduling rules as any time (lead time, hours, overlap, with the doctor's schedule locked), a new version,
    history, audit, the doctor's notice and the event on every topic the appointment is on."""
    session = uow.session
    await check_time(
        session,
        c,
        now=now,
        appointment_id=a.id,
        doctor_id=freed.doctor_id,
        location_id=freed.location_id,
        start=freed.start_at,
        duration_minutes=a.duration_minutes,
    )
    old_start = a.start_at
    a.start_at, a.location_id = freed.start_at, freed.location_id
    a.version += 1
    a.updated_at = now
    details: dict[str, Any] = {
        "action": "waitlist-move",
        "from": old_start.isoformat(),
        "start": freed.start_at.isoformat(),
    }
    await plain_rows.add(
        session,
        AppointmentHistory,
        {
            "appointment_id": a.id,
            "at": now,
            "actor_id": actor.user_id,
            "from_status": a.status,
            "to_status": a.status,
            "details": details,
        },
    )
    await audit_now(
        session,
        at=now,
        actor_id=actor.user_id,
        action=MOVED_EVENT.value,
        entity="appointment",
        entity_id=a.id,
        details=details,
    )
    patient = await session.scalar(select(Patient.name).where(Patient.id == a.patient_id)) or ""
    timezone = c.directory.locations[freed.location_id]
    text = Text(
        "{name} moved their appointment from {old} to {when}, a time freed from the waitlist.",
        name=patient,
        old=Moment(old_start, timezone),
        when=Moment(freed.start_at, timezone),
    )
    notices.leave(session, [a.doctor_id], appointment_id=a.id, text=text, now=now)
    topics = (appointment_topic(a.id), patient_topic(a.patient_id), ALL_APPOINTMENTS_TOPIC, doctor_topic(a.doctor_id))
    data = {
        "appointment_id": a.id,
        "status": a.status,
        "version": a.version,
        "start": freed.start_at.isoformat(),
        "from_start": old_start.isoformat(),
    }
    uow.emit(DomainEvent(MOVED_EVENT, topics, data=data, notify_user_ids=(a.doctor_id,), notify_text=text))


async def _tell_the_others(uow: UnitOfWork, c: Clinic, freed: WaitlistTime, *, winner: int, now: datetime) -> None:
    """End every other open offer of the time and tell each of those patients it is gone (notice, live, and a push:
    the offer reached their phone, so does its end, before they open the app to take a time that is not there)."""
    session = uow.session
    rows = (
        await session.execute(
            update(WaitlistOffer)
            .where(
                WaitlistOffer.time_id == freed.id, WaitlistOffer.state == OfferState.OPEN, WaitlistOffer.id != winner
            )
            .values(state=OfferState.GONE.value, answered_at=now)
            .returning(WaitlistOffer.id, WaitlistOffer.patient_id)
        )
    ).all()
    if not rows:
        return
    found = await session.execute(select(Patient.id, Patient.user_id).where(Patient.id.in_([p for _, p in rows])))
    users = {row[0]: row[1] for row in found.all()}
    when = Moment(freed.start_at, c.directory.locations[freed.location_id])
    text = Text(
        "The time {when} with {doctor} was taken by another patient. You stay on the waitlist.",
        when=when,
        doctor=c.directory.doctors[freed.doctor_id],
    )
    for offer_id, patient_id in rows:
        user_id = users.get(patient_id)
        told = (user_id,) if user_id is not None else ()
        notices.leave(session, told, appointment_id=None, text=text, now=now)
        topics = (patient_topic(patient_id), *(user_topic(u) for u in told))
        data = {"offer_id": offer_id, "patient_id": patient_id, "why": "taken"}
        uow.emit(DomainEvent(GONE, topics, data=data, notify_user_ids=told, notify_text=text))


async def _end_offer(rt: Runtime, offer_id: int, patient_id: int, *, now: datetime) -> None:
    async with unit_of_work(rt) as uow:
        ended = await uow.session.execute(
            update(WaitlistOffer)
            .where(WaitlistOffer.id == offer_id, WaitlistOffer.state == OfferState.OPEN)
            .values(state=OfferState.GONE.value, answered_at=now)
        )
        if getattr(ended, "rowcount", 0):
            uow.emit(DomainEvent(GONE, (patient_topic(patient_id),), data={"offer_id": offer_id, "why": "not-free"}))


async def decline(rt: Runtime, actor: Actor, offer_id: int) -> None:
    """Decline an offered time: the patient stays on the waitlist; the time goes to the next."""
    patient_id = patient_of(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        offer, _, _ = await _offer_rows(uow.session, offer_id, patient_id)
        if offer.state != OfferState.OPEN:
            return
        offer.state, offer.answered_at = OfferState.DECLINED.value, now
        uow.emit(changed(patient_id, offer_id=offer_id))
