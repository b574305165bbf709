"""The patient's offers screen: the alternatives the doctor sent, each with its time (in the location's timezone),
fees and coverage warning; the patient accepts one or rejects them all. Others who may see the appointment
(its doctor, support, admins) see the same screen read-only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.appointments.decisions import (
    MAX_REASON_CHARS,
    OPEN,
    can_answer,
    patient_cancel_deadline,
    patient_may_cancel,
    too_late_to_cancel,
)
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.edges import earliest
from doctordesk.domain.events import CLINIC_TOPIC, appointment_topic, user_topic
from doctordesk.domain.review.coverage import for_patient
from doctordesk.domain.roles import Role
from doctordesk.i18n import N_, _, maybe
from doctordesk.i18n.formats import format_local, money
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown
from doctordesk.screens.wording import status_badge, status_label

SCREEN = "appointment-offers"
# An offer's state (``store/review_tables.OfferState``) in words; the code stays in ``props``.
OFFER_STATES = {
    "open": N_("Not answered yet"),
    "accepted": N_("Accepted"),
    "rejected": N_("Rejected"),
    "withdrawn": N_("Withdrawn"),
}


def endpoint(appointment_id: int) -> str:
    return f"/profile/appointments/{appointment_id}/offers"


def cancel_endpoint(appointment_id: int) -> str:
    """The screen with the cancel confirmation open (PUT, PATCH), and the cancel itself (POST)."""
    return f"{endpoint(appointment_id)}/cancel"


def topics(appointment_id: int, user_id: int) -> tuple[str, ...]:
    return (appointment_topic(appointment_id), user_topic(user_id), CLINIC_TOPIC)  # the clinic: locations' names


def shown(appointment_id: int, user_id: int, *, confirming: bool = False) -> Shown:
    """Repeatable: who may look (the appointment's patient and doctor, support, admins) changes only with the
    appointment (its topic) or the viewer's role (the auth cache)."""
    address = cancel_endpoint(appointment_id) if confirming else endpoint(appointment_id)
    return Shown(SCREEN, address, topics(appointment_id, user_id), repeatable=True)


@dataclass(frozen=True, slots=True)
class OfferView:
    id: int
    n: int
    start: datetime
    duration_minutes: int
    doctor: str
    location: str
    timezone: str
    doctor_fee_cents: int | None
    total_fee_cents: int | None
    currency: str
    coverage_warning: str | None
    state: str


@dataclass(frozen=True, slots=True)
class OffersScreen:
    view: AppointmentView
    offers: Sequence[OfferView]
    is_patient: bool
    layout: Layout
    timeout: int
    now: datetime  # an open offer whose time has come can no longer be accepted
    cancel_hours: int = 24  # the clinic's deadline: the patient cancels up to this many hours before the start
    confirming: bool = False  # the cancel confirmation is open (the screen's address ends in /cancel)


def passed(offer: OfferView, now: datetime) -> bool:
    """The offer's time has come: accepting it is refused (services/review/offers.accept), so it is not offered."""
    return offer.start <= now


def next_passing(offers: Sequence[OfferView], now: datetime, *, deadline: datetime | None = None) -> datetime | None:
    """The moment time alone changes the page: the first open offer's time still ahead, or the deadline for
    canceling when it comes first (None: no such moment)."""
    moments = [o.start for o in offers if o.state == "open"]
    if deadline is not None:
        moments.append(deadline)
    return earliest(moments, after=now)


def cancel_deadline(screen: OffersScreen) -> datetime | None:
    """When the patient's "Cancel appointment" gives way to "contact the clinic" (None: it is not shown)."""
    if not screen.is_patient or screen.view.status not in OPEN:
        return None
    return patient_cancel_deadline(screen.view.start, hours=screen.cancel_hours)


def status_sentence(view: AppointmentView, *, patient: bool) -> str:
    """Where the appointment stands, in plain words ("Your request for Mon 30 Nov 2026, 08:00 is waiting for the
    doctor."); for the doctor, support and admins the status names it."""
    when = format_local(view.start, view.location.timezone)
    if not patient:
        return _("This appointment is {status}: {when}.", status=status_label(view.status, Role.DOCTOR), when=when)
    sentences = {
        Status.REQUESTED: N_("Your request for {when} is waiting for the doctor."),
        Status.APPROVED: N_("Your appointment on {when} is confirmed."),
        Status.DECLINED: N_("The doctor declined your request for {when}."),
        Status.CANCELED: N_("Your appointment on {when} was canceled."),
        Status.COMPLETED: N_("Your appointment on {when} has taken place."),
        Status.NO_SHOW: N_("Your appointment on {when} was missed."),
    }
    if view.status.is_pending_response:
        return _("The doctor cannot see you at {when} and offers other times: accept one or reject them all.",
                 when=when)  # fmt: skip
    return _(sentences[view.status], when=when)


def _cancel_elements(s: OffersScreen) -> list[Element]:
    """The patient's "Cancel appointment" (or, past the clinic's deadline, the sentence that replaces it) and its
    confirmation, which names the appointment."""
    view = s.view
    deadline = cancel_deadline(s)
    may = patient_may_cancel(view.status, view.start, now=s.now, hours=s.cancel_hours)
    when = format_local(view.start, view.location.timezone)
    return [
        el(
            "cancel-appointment",
            "Button",
            label=_("Cancel appointment"),
            visible=may,
            action=Action("PUT", cancel_endpoint(view.id)),
        ),
        el(
            "cancel-note",
            "Caption",
            value=maybe(too_late_to_cancel(s.cancel_hours)) if deadline is not None and not may else None,
            visible=deadline is not None and not may,
        ),
        el(
            "cancel-modal",
            "Modal",
            el(
                "reason",
                "Edit",
                label=_("Reason (optional)"),
                name="reason",
                placeholder=_("Why are you canceling?"),
                props={"multiline": True, "maxlength": MAX_REASON_CHARS},
            ),
            el("version~cancel", "Hidden", name="version", value=str(view.version)),
            el(
                "cancel-submit",
                "Button",
                label=_("Cancel appointment"),
                action=Action("POST", cancel_endpoint(view.id), form="cancel-modal"),
            ),
            el("cancel-back", "Link", label=_("Keep appointment"), action=Action("PUT", endpoint(view.id))),
            label=_("Cancel this appointment?"),
            value=_(
                "Your appointment with {doctor} at {location} on {when} will be canceled.",
                doctor=view.doctor.name,
                location=view.location.name,
                when=when,
            ),
            visible=s.confirming and may,
            # Escape activates this control: the screen goes back to its address without the confirmation.
            props={"cancel": "cancel-back"},
        ),
    ]


def _offer(s: OffersScreen, o: OfferView, actionable: bool) -> Element:
    a = s.view.id
    n = o.n
    open_offer = actionable and o.state == "open"
    gone = open_offer and passed(o, s.now)
    children = [
        el(f"offer-time~{n}", "Regular", label=_("Time"), value=format_local(o.start, o.timezone)),
        el(f"offer-doctor~{n}", "Regular", label=_("Doctor"), value=o.doctor),
        el(f"offer-location~{n}", "Regular", label=_("Location"), value=o.location),
        el(
            f"offer-fee~{n}",
            "Section",
            label=_("Total fee"),
            value=money(o.total_fee_cents, o.currency) if o.total_fee_cents is not None else _("On request"),
        ),
        el(
            f"offer-doctor-fee~{n}",
            "Highlight",
            label=_("Doctor fee"),
            value=money(o.doctor_fee_cents, o.currency) if o.doctor_fee_cents is not None else _("On request"),
        ),
        el(
            f"offer-state~{n}",
            "Badge",
            value=_(OFFER_STATES[o.state]) if o.state in OFFER_STATES else o.state,
            props={"state": o.state},
        ),  # fmt: skip
    ]
    if o.coverage_warning and open_offer and not gone:
        children.append(
            el(
                f"coverage-acknowledged~{n}",
                "Checkbox",
                label=_("I understand this time may not be covered by my insurance"),
                name="coverage-acknowledged",
                value=False,
            )
        )
    if s.is_patient:
        children += [
            el(f"version~{n}", "Hidden", name="version", value=str(s.view.version)),
            el(
                f"accept~{n}",
                "Button",
                label=_("Accept this time"),
                enabled=open_offer and not gone,
                action=Action(
                    "POST",
                    f"{endpoint(a)}/{o.id}/accept",
                    form=f"offer-{n}",
                    # Asked first: the time being accepted, with whom and where.
                    confirm=_(
                        "Accept {when} with {doctor} at {location}? It becomes your appointment and the other "
                        "offered times are withdrawn.",
                        when=format_local(o.start, o.timezone),
                        doctor=o.doctor,
                        location=o.location,
                    ),
                ),
            ),
            el(
                f"accept-note~{n}",
                "Caption",
                value=_("This time has passed: it can no longer be accepted."),
                visible=gone,
            ),
        ]
    return el(
        f"offer-{n}",
        "Card",
        *children,
        label=_("Alternative {n}", n=n),
        warning=maybe(for_patient(o.coverage_warning) if s.is_patient else o.coverage_warning),
        highlighted=o.state == "accepted",
        props={"offer": o.id},
    )


def render(screen: OffersScreen) -> Page:
    view = screen.view
    actionable = screen.is_patient and can_answer(view.status)
    note = status_sentence(view, patient=screen.is_patient)
    open_offers = actionable and any(o.state == "open" for o in screen.offers)
    elements: list[Element] = [
        el("title", "Heading", value=_("Your appointment") if screen.is_patient else _("Offers sent to the patient")),
        el("version", "Hidden", name="version", value=str(view.version)),
        el(
            "details",
            "Section",
            el(
                "requested-time",
                "Regular",
                label=_("Time"),
                value=format_local(view.start, view.location.timezone),
            ),
            el("doctor", "Regular", label=_("Doctor"), value=view.doctor.name),
            el("location", "Regular", label=_("Location"), value=view.location.name),
            status_badge("status", view.status, Role.PATIENT if screen.is_patient else Role.DOCTOR, label=_("Status")),
            el(
                "decline-reason",
                "Text",
                label=_("The doctor's reason") if screen.is_patient else _("Reason for declining"),
                value=view.decline_reason,
                visible=view.status is Status.DECLINED and bool(view.decline_reason),
            ),
            label=_("Appointment"),
        ),
        el("status-note", "Notice", value=note, props={"tone": "info"}),
        el(
            "offers",
            "Section",
            el("offers-empty", "Caption", value=_("No alternatives were offered."), visible=not screen.offers),
            *(_offer(screen, o, actionable) for o in screen.offers),
            label=_("Times offered"),
        ),
    ]
    if screen.is_patient:
        elements.append(
            el(
                "reject-all",
                "Button",
                label=_("Reject all offered times"),
                visible=open_offers,
                action=Action(
                    "POST",
                    f"{endpoint(view.id)}/reject",
                    confirm=_("Reject every offered time? The request will be canceled."),
                ),
            )
        )
        elements += _cancel_elements(screen)
    address = cancel_endpoint(view.id) if screen.confirming else endpoint(view.id)
    return Page(
        screen=SCREEN,
        title=_("Offered times"),
        endpoint=address,
        poll=address,
        timeout=screen.timeout,
        elements=tuple(elements),
        layout=screen.layout,
    )
