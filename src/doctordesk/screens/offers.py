"""The patient's offers screen: the alternatives the doctor sent, each with its time (in the location's timezone),
fees and coverage warning; the patient accepts one or rejects them all. Others who may see the appointment
(its doctor, support, admins) see the same screen read-only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.appointments.decisions import can_answer
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


def topics(appointment_id: int, user_id: int) -> tuple[str, ...]:
    return (appointment_topic(appointment_id), user_topic(user_id), CLINIC_TOPIC)  # the clinic: locations' names


def shown(appointment_id: int, user_id: int) -> Shown:
    """Repeatable: who may look (the appointment's patient and doctor, support, admins) changes only with the
    appointment (its topic) or the viewer's role (the auth cache)."""
    return Shown(SCREEN, endpoint(appointment_id), topics(appointment_id, user_id), repeatable=True)


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


def passed(o: OfferView, now: datetime) -> bool:
    """The offer's time has come: accepting it is refused (services/review/offers.accept), so it is not offered."""
    return o.start <= now


def next_passing(offers: Sequence[OfferView], now: datetime) -> datetime | None:
    """The moment time alone changes the page: the first open offer's time still ahead (None: no such offer)."""
    return earliest((o.start for o in offers if o.state == "open"), after=now)


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
                action=Action("POST", f"{endpoint(a)}/{o.id}/accept", form=f"offer-{n}"),
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


def render(s: OffersScreen) -> Page:
    view = s.view
    actionable = s.is_patient and can_answer(view.status)
    note = None
    if not can_answer(view.status):
        note = _(
            "This appointment is {status}: {when}.",
            status=status_label(view.status, Role.PATIENT),
            when=format_local(view.start, view.location.timezone),
        )
    elements: list[Element] = [
        el("title", "Heading", value=_("Your appointment") if s.is_patient else _("Offers sent to the patient")),
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
            status_badge("status", view.status, Role.PATIENT if s.is_patient else Role.DOCTOR, label=_("Status")),
            el(
                "decline-reason",
                "Text",
                label=_("The doctor's reason") if s.is_patient else _("Reason for declining"),
                value=view.decline_reason,
                visible=view.status is Status.DECLINED and bool(view.decline_reason),
            ),
            label=_("Appointment"),
        ),
        el("status-note", "Notice", value=note, visible=note is not None, props={"tone": "info"}),
        el(
            "offers",
            "Section",
            el("offers-empty", "Caption", value=_("No alternatives were offered."), visible=not s.offers),
            *(_offer(s, o, actionable) for o in s.offers),
            label=_("Times offered"),
        ),
    ]
    if s.is_patient:
        elements.append(
            el(
                "reject-all",
                "Button",
                label=_("Reject all offered times"),
                enabled=actionable and any(o.state == "open" for o in s.offers),
                action=Action(
                    "POST",
                    f"{endpoint(view.id)}/reject",
                    confirm=_("Reject every offered time? The request will be canceled."),
                ),
            )
        )
    return Page(
        screen=SCREEN,
        title=_("Offered times"),
        endpoint=endpoint(view.id),
        poll=endpoint(view.id),
        timeout=s.timeout,
        elements=tuple(elements),
        layout=s.layout,
    )
