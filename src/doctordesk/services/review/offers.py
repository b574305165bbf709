"""The patient's answer to Suggested Scheduling: accept one offer (approved at that time, the other offers withdrawn)
or reject them all (the request is canceled). Each answer is one transaction with history, audit and an event that
notifies the doctor; the offers screen (``services.review.offers_screen``) and FHIR answer through these."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.decisions import Trigger, next_status
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, InvalidTransition, NotFound, ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.i18n.formats import format_local
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.review.subject import appointment_for
from doctordesk.services.uow import unit_of_work
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, Location


async def answering(
    session: AsyncSession, actor: Actor, appointment_id: int, *, version: int | None
) -> tuple[Appointment, list[AppointmentOffer]]:
    """The patient's own appointment, locked, at the ``version`` they saw (else APPOINTMENT_CHANGED), with its
    offers: what rejecting them all and cancelling start from."""
    a = await appointment_for(session, actor, appointment_id, lock=True, patient=True)
    if version is not None and a.version != version:
        raise AppointmentChanged()
    offers = (await session.scalars(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a.id))).all()
    return a, list(offers)


async def accept_offer(
    rt: Runtime,
    actor: Actor,
    appointment_id: int,
    offer_id: int,
    *,
    version: int | None,
    coverage_acknowledged: bool,
) -> tuple[Status, str]:
    """The patient accepts one offer (the screen's and the FHIR interface's one path): the new status and the
    accepted time as the patient reads it. ``version``: refused with APPOINTMENT_CHANGED when stale (None: no
    check)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        a = await appointment_for(session, actor, appointment_id, lock=True, patient=True)
        offer = await session.get(AppointmentOffer, offer_id)
        if offer is None or offer.appointment_id != a.id:
            raise NotFound(N_("Offer not found."))
        if version is not None and a.version != version:
            raise AppointmentChanged()
        to = next_status(Status(a.status), Trigger.ACCEPT_OFFER)
        if offer.state != OfferState.OPEN:
            raise InvalidTransition(N_("This offer is no longer open."))
        if offer.start_at <= now:
            raise InvalidTransition(N_("This offered time has passed."))
        if offer.coverage_warning and not coverage_acknowledged:
            raise ValidationFailed(
                fields={"coverage-acknowledged": N_("Confirm that you accept the coverage risk of this time.")}
            )
        siblings = (
            (await session.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a.id)))
            .scalars()
            .all()
        )
        doctors = {a.doctor_id, *(o.doctor_id for o in siblings)}
        for o in siblings:
            if o.state == OfferState.OPEN:
                o.state = OfferState.ACCEPTED if o.id == offer.id else OfferState.WITHDRAWN
                o.answered_at = now
        old = {"doctor_id": a.doctor_id, "location_id": a.location_id, "start": a.start_at.isoformat()}
        a.doctor_id, a.location_id = offer.doctor_id, offer.location_id
        a.start_at, a.duration_minutes = offer.start_at, offer.duration_minutes
        location = await session.get(Location, offer.location_id)
        moment = Moment(offer.start_at, location.timezone if location else "UTC")
        when = format_local(moment.at, moment.timezone)
        # The audit keeps the instant itself: a date written in the actor's language would read wrong to others.
        # What the appointment was (``previous``) beside what it is now, so the trail reads "Doctor: A → B".
        details = {
            "action": "accept-offer", "offer": offer.id, "n": offer.n, "previous": old,
            "doctor_id": offer.doctor_id, "location_id": offer.location_id, "start": offer.start_at.isoformat(),
        }  # fmt: skip
        await transition(
            uow,
            actor,
            a,
            to,
            Trigger.ACCEPT_OFFER,
            details,
            now=now,
            also_doctors=doctors,
            notify=tuple(sorted(doctors)),
            text=Text("{patient} accepted the time {when}.", patient=actor.display_name, when=moment),
        )
    return to, when


async def reject_offers(rt: Runtime, actor: Actor, appointment_id: int, *, version: int | None) -> Status:
    """The patient rejects every offer (the screen's and the FHIR interface's one path): the new status."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        a, offers = await answering(session, actor, appointment_id, version=version)
        to = next_status(Status(a.status), Trigger.REJECT_OFFERS)
        doctors = {a.doctor_id, *(o.doctor_id for o in offers)}
        for o in offers:
            if o.state == OfferState.OPEN:
                o.state, o.answered_at = OfferState.REJECTED, now
        await transition(
            uow,
            actor,
            a,
            to,
            Trigger.REJECT_OFFERS,
            {"action": "reject-offers", "offers": [o.id for o in offers]},
            now=now,
            also_doctors=doctors,
            notify=tuple(sorted(doctors)),
            text=Text("{patient} rejected the offered times; the request is canceled.", patient=actor.display_name),
        )
    return to
