"""The patient's answer to Suggested Scheduling: see the offers, accept one (approved at that time, the other offers
withdrawn) or reject them all (the request is canceled). Each answer is one transaction with history, audit and an
event that notifies the doctor."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.appointments.decisions import Trigger, next_status, parse_flag
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, InvalidTransition, NotFound, ValidationFailed
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_local
from doctordesk.runtime import Runtime
from doctordesk.screens import offers as offers_screen
from doctordesk.screens import review_approve
from doctordesk.screens.protocol import Page, UpdateSet, p_update
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.wording import status_label, status_props
from doctordesk.services.appointments.reading import get_appointment
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.review.cards import version_from
from doctordesk.services.review.subject import appointment_for
from doctordesk.services.uow import unit_of_work
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, Location, User

_Doctor = aliased(User)


async def _render(rt: Runtime, actor: Actor, appointment_id: int, layout: Any, confirming: bool) -> Page:
    if confirming and actor.role is not Role.PATIENT:
        raise NotFound(N_("Appointment not found."))  # only the patient cancels: the confirmation is theirs
    async with rt.db.read() as session:
        view = await get_appointment(session, actor, appointment_id)
        rows = await session.execute(
            select(AppointmentOffer, _Doctor.display_name, Location)
            .join(_Doctor, _Doctor.id == AppointmentOffer.doctor_id)
            .join(Location, Location.id == AppointmentOffer.location_id)
            .where(AppointmentOffer.appointment_id == appointment_id)
            .order_by(AppointmentOffer.n, AppointmentOffer.id)
        )
        offers = [
            offers_screen.OfferView(
                id=o.id,
                n=o.n,
                start=o.start_at,
                duration_minutes=o.duration_minutes,
                doctor=doctor,
                location=loc.name,
                timezone=loc.timezone,
                doctor_fee_cents=o.doctor_fee_cents,
                total_fee_cents=o.total_fee_cents,
                currency=o.currency,
                coverage_warning=o.coverage_warning,
                state=o.state,
            )
            for o, doctor, loc in rows
        ]
    # An open offer's time passing disables the patient's "Accept" (accepting it is refused): their page lasts until
    # then. Others see no control and nothing that time changes.
    now = rt.clock.now()
    patient = actor.role is Role.PATIENT
    screen = offers_screen.OffersScreen(
        view=view,
        offers=offers,
        is_patient=patient,
        layout=layout,
        timeout=rt.settings.poll_review_seconds,
        now=now,
        cancel_hours=rt.settings.patient_cancel_hours,
        confirming=confirming,
    )
    page = offers_screen.render(screen)
    # The clinic's deadline for canceling replaces the patient's "Cancel appointment" with a sentence: a time edge.
    deadline = offers_screen.cancel_deadline(screen)
    return lasting(page, offers_screen.next_passing(offers, now, deadline=deadline) if patient else None)


def viewing(
    rt: Runtime, actor: Actor, appointment_id: int, *, layout: Any, client_id: str | None, confirming: bool = False
) -> Viewing:
    """The offers of one appointment, as ``actor`` sees them: ``page()`` for the PUT, ``poll()`` for the PATCH (its
    patient answers; its doctor, support and admins look). ``confirming``: with the patient's cancel confirmation
    open (the address ``…/offers/cancel``)."""
    render = partial(_render, rt, actor, appointment_id, layout, confirming)
    shown = offers_screen.shown(appointment_id, actor.user_id, confirming=confirming)
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, rt.settings.poll_review_seconds, render)


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


def answered(rt: Runtime, to: Status, text: str) -> UpdateSet:
    """The patient's answer (or cancel) done: the status shown, the screen closed to the list, ``text`` told."""
    return UpdateSet(
        screen=offers_screen.SCREEN,
        state="",
        timeout=rt.settings.poll_list_seconds,
        patches=[p_update("status", value=status_label(to, Role.PATIENT), props=status_props(to))],
        navigate=review_approve.LIST_ENDPOINT,
        notice={"level": "info", "text": _(text)},
    )


async def accept(rt: Runtime, actor: Actor, appointment_id: int, offer_id: int, form: Mapping[str, str]) -> UpdateSet:
    """Accept one offer: the appointment is approved at its time (and with its doctor and location); the other
    offers are withdrawn. An offer with a coverage warning needs ``coverage-acknowledged``."""
    to, when = await accept_offer(
        rt,
        actor,
        appointment_id,
        offer_id,
        version=version_from(form),
        coverage_acknowledged=parse_flag(form.get("coverage-acknowledged"), field="coverage-acknowledged"),
    )
    return answered(rt, to, Text("Appointment confirmed for {when}.", when=when))


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


async def reject_all(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> UpdateSet:
    """Reject every offer: the request is canceled (a new request can be made)."""
    to = await reject_offers(rt, actor, appointment_id, version=version_from(form))
    return answered(rt, to, N_("All offered times rejected; the request is canceled."))


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
