"""Joining and leaving the waitlist, and what a patient's waitlist holds (docs/waitlist.md). Only patients, each for
themself: another patient's entry or offer is 404, as an unknown one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.decisions import OPEN
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, patient_topic
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.waitlist.rules import MAX_ENTRIES, EntryState, OfferState, Wish, WishProblems, parse_wish
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit_now
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.store import plain_rows
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

# The event every change of the waitlist emits: it wakes the waitlist's rounds (workers/waitlist.py).
CHANGED = EventKind.WAITLIST_CHANGED
OFFERED = EventKind.WAITLIST_OFFERED
ACCEPTED = EventKind.WAITLIST_ACCEPTED
GONE = EventKind.WAITLIST_GONE
WAKING = frozenset({CHANGED, GONE})


def waitlist_topic() -> str:
    """Every waitlist (the admins' screen)."""
    return "waitlist"


def patient_of(actor: Actor) -> int:
    """The patient a waitlist request is for: the signed-in patient; anyone else gets 404 (not their screen)."""
    if actor.role is not Role.PATIENT or actor.patient_id is None:
        raise NotFound(N_("Screen not found."))
    return actor.patient_id


def changed(patient_id: int, **data: object) -> DomainEvent:
    return DomainEvent(CHANGED, (patient_topic(patient_id), waitlist_topic()), data=dict(data))


def _check_places(c: Clinic, wish: Wish) -> dict[str, str]:
    fields: dict[str, str] = {}
    if wish.location_id not in c.directory.locations:
        fields["location"] = N_("Unknown location.")
    elif wish.doctor_id is None:
        if not any(loc == wish.location_id for _, loc in c.work_hours):
            fields["location"] = N_("No doctor works at this location.")
    elif wish.doctor_id not in c.directory.doctors:
        fields["doctor"] = N_("Unknown doctor.")
    elif (wish.doctor_id, wish.location_id) not in c.work_hours:
        fields["location"] = N_("The doctor does not work at this location.")
    return fields


async def _check_held(session: AsyncSession, wish: Wish, patient_id: int, now: datetime) -> dict[str, str]:
    if wish.appointment_id is None:
        return {}
    a = await session.get(Appointment, wish.appointment_id)
    if a is None or a.patient_id != patient_id or Status(a.status) not in OPEN or a.start_at <= now:
        return {"appointment": N_("Choose one of your coming appointments.")}
    return {}


async def join(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> int:
    """Join the waitlist with the wish the form spells; the new entry's id. Refused with FIELDS_VALIDATION_ERROR
    (nothing written) when a field is wrong, the patient already waits for the same, or waits for ``MAX_ENTRIES``
    things already."""
    patient_id = patient_of(actor)
    now = rt.clock.now()
    try:
        wish = parse_wish(form, today=now.date())
    except WishProblems as problems:
        raise ValidationFailed(fields=problems.fields) from None
    async with unit_of_work(rt) as uow:
        session = uow.session
        c = await cached_clinic(rt, session)
        fields = _check_places(c, wish) or await _check_held(session, wish, patient_id, now)
        if fields:
            raise ValidationFailed(fields=fields)
        waiting = WaitlistEntry.patient_id == patient_id, WaitlistEntry.state == EntryState.WAITING
        count = await session.scalar(select(func.count()).select_from(WaitlistEntry).where(*waiting))
        if (count or 0) >= MAX_ENTRIES:
            raise ValidationFailed(
                Text("You can wait for at most {count} times at once: leave one first.", count=MAX_ENTRIES)
            )
        same = await session.scalar(
            select(WaitlistEntry.id).where(
                *waiting,
                WaitlistEntry.location_id == wish.location_id,
                WaitlistEntry.service == wish.service,
                WaitlistEntry.doctor_id.is_(None)
                if wish.doctor_id is None
                else WaitlistEntry.doctor_id == wish.doctor_id,
            )
        )
        if same is not None:
            raise ValidationFailed(
                N_("You are already waiting for this doctor, place and service."),
                fields={"service": N_("You are already waiting for this doctor, place and service.")},
            )
        values = {
            "patient_id": patient_id,
            "doctor_id": wish.doctor_id,
            "location_id": wish.location_id,
            "service": wish.service,
            "until": wish.until,
            "days": wish.days,
            "time_from": wish.time_from,
            "time_to": wish.time_to,
            "appointment_id": wish.appointment_id,
            "state": EntryState.WAITING.value,
            "created_at": now,
            "ended_at": None,
        }
        entry_id = await plain_rows.add_returning_id(session, WaitlistEntry, values)
        await audit_now(
            session,
            at=now,
            actor_id=actor.user_id,
            action="waitlist.join",
            entity="waitlist_entry",
            entity_id=entry_id,
            details={
                "doctor": wish.doctor_id,
                "location": wish.location_id,
                "service": wish.service,
                "until": wish.until.isoformat(),
            },
        )
        uow.emit(changed(patient_id, entry_id=entry_id))
    return entry_id


async def leave(rt: Runtime, actor: Actor, entry_id: int) -> None:
    """Leave the waitlist (one entry): its open offers end as declined, so their times go to the next."""
    patient_id = patient_of(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        entry = await session.get(WaitlistEntry, entry_id)
        if entry is None or entry.patient_id != patient_id:
            raise NotFound(N_("Waitlist entry not found."))
        if entry.state != EntryState.WAITING:
            return  # left already (another tab): nothing more to do
        entry.state, entry.ended_at = EntryState.LEFT.value, now
        await session.execute(
            update(WaitlistOffer)
            .where(WaitlistOffer.entry_id == entry_id, WaitlistOffer.state == OfferState.OPEN)
            .values(state=OfferState.DECLINED.value, answered_at=now)
        )
        await audit_now(
            session,
            at=now,
            actor_id=actor.user_id,
            action="waitlist.leave",
            entity="waitlist_entry",
            entity_id=entry_id,
            details={},
        )
        uow.emit(changed(patient_id, entry_id=entry_id))


@dataclass(frozen=True, slots=True)
class ShownEntry:
    id: int
    doctor_id: int | None
    location_id: int
    service: str
    until: date
    days: int
    time_from: time
    time_to: time
    held_start: datetime | None


@dataclass(frozen=True, slots=True)
class ShownOffer:
    id: int
    doctor_id: int
    location_id: int
    service: str
    start: datetime
    expires_at: datetime


async def own_waitlist(rt: Runtime, patient_id: int) -> tuple[list[ShownEntry], list[ShownOffer]]:
    """The patient's waiting entries (oldest first) and their open offers (earliest time first)."""
    now = rt.clock.now()
    async with rt.db.read() as session:
        entries = (
            await session.execute(
                select(WaitlistEntry, Appointment.start_at)
                .outerjoin(Appointment, Appointment.id == WaitlistEntry.appointment_id)
                .where(WaitlistEntry.patient_id == patient_id, WaitlistEntry.state == EntryState.WAITING)
                .order_by(WaitlistEntry.created_at, WaitlistEntry.id)
            )
        ).all()
        offers = (
            await session.execute(
                select(WaitlistOffer, WaitlistTime, WaitlistEntry.service)
                .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
                .join(WaitlistEntry, WaitlistEntry.id == WaitlistOffer.entry_id)
                .where(
                    WaitlistOffer.patient_id == patient_id,
                    WaitlistOffer.state == OfferState.OPEN,
                    WaitlistOffer.expires_at > now,
                )
                .order_by(WaitlistTime.start_at, WaitlistOffer.id)
            )
        ).all()
    return (
        [
            ShownEntry(e.id, e.doctor_id, e.location_id, e.service, e.until, e.days, e.time_from, e.time_to, held)
            for e, held in entries
        ],
        [ShownOffer(o.id, t.doctor_id, t.location_id, service, t.start_at, o.expires_at) for o, t, service in offers],
    )
