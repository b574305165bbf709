"""The offers screen: the patient's answer to Suggested Scheduling (see the offers, accept one, reject them all) and
their cancel from "Your appointment"; its doctor, support and admins look. Each action runs its use case
(``services.review.offers``, ``services.review.patient_cancel``), then answers with the screen closed to the
list."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import aliased

from doctordesk.domain.appointments.decisions import clean_cancel_reason, parse_flag
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import NotFound
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens import offers as offers_screen
from doctordesk.screens import review_approve
from doctordesk.screens.protocol import Page, UpdateSet, p_update
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.wording import status_label, status_props
from doctordesk.services.appointments.reading import get_appointment
from doctordesk.services.review.cards import version_from
from doctordesk.services.review.offers import accept_offer, reject_offers
from doctordesk.services.review.patient_cancel import cancel_appointment
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Location, User

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


async def reject_all(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> UpdateSet:
    """Reject every offer: the request is canceled (a new request can be made)."""
    to = await reject_offers(rt, actor, appointment_id, version=version_from(form))
    return answered(rt, to, N_("All offered times rejected; the request is canceled."))


async def cancel(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> UpdateSet:
    """POST cancel (``version``, optional ``reason``): the appointment is canceled; the screen closes to the list."""
    reason = clean_cancel_reason(form.get("reason"))
    to = await cancel_appointment(rt, actor, appointment_id, version=version_from(form), reason=reason)
    return answered(rt, to, N_("Your appointment is canceled."))
