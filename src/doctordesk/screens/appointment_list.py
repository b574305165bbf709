"""The appointment list: the doctor's appointments grouped by what they need, with entry points to Review and
Approve and to Chat."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from doctordesk.domain.appointments import AppointmentView, format_local
from doctordesk.domain.events import ALL_APPOINTMENTS_TOPIC, doctor_topic, patient_topic, user_topic
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.status import Status
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown

SCREEN = "appointment-list"
ENDPOINT = "/profile/appointments"

SECTIONS = (
    ("needs-decision", "Awaiting your decision"),
    ("waiting", "Waiting for the patient"),
    ("upcoming", "Upcoming"),
    ("past", "Past and closed"),
)


def topics(actor: Actor) -> tuple[str, ...]:
    """The data the list shows, for the poll's change check and real-time routing."""
    if actor.role is Role.DOCTOR:
        return (doctor_topic(actor.user_id), user_topic(actor.user_id))
    if actor.role is Role.PATIENT and actor.patient_id is not None:
        return (patient_topic(actor.patient_id), user_topic(actor.user_id))
    return (ALL_APPOINTMENTS_TOPIC, user_topic(actor.user_id))


def shown(actor: Actor) -> Shown:
    return Shown(SCREEN, ENDPOINT, topics(actor))


def section_of(view: AppointmentView, now: datetime) -> str:
    if view.status is Status.REQUESTED and view.start > now:
        return "needs-decision"
    if view.status.is_pending_response and view.start > now:
        return "waiting"
    if view.status is Status.APPROVED and view.end > now:
        return "upcoming"
    return "past"


def chat_endpoint(appointment_id: int) -> str:
    return f"/profile/messages/user-chat?appointment-id={appointment_id}"


def row(view: AppointmentView, actor: Actor) -> Element:
    a = view.id
    other = view.patient.name if actor.role is not Role.PATIENT else view.doctor.name
    review_label = "Review and approve" if view.status is Status.REQUESTED else "Details"
    children = [
        el(
            f"time-{a}",
            "Regular",
            value=format_local(view.start, view.location.timezone),
            props={"datetime": view.start.isoformat(), "minutes": view.duration_minutes},
        ),
        el(
            f"patient-{a}",
            "Regular",
            value=other,
            label="Doctor" if actor.role is Role.PATIENT else "Patient",
        ),
        el(f"location-{a}", "Regular", value=view.location.name, label="Location"),
        el(f"status-{a}", "Badge", value=view.status.public_name, props={"code": int(view.status)}),
        el(
            f"unread-{a}",
            "Badge",
            value=str(view.unread),
            label="unread messages",
            visible=view.unread > 0,
            props={"tone": "attention"},
        ),
    ]
    if actor.role is not Role.PATIENT:
        children.append(
            el(
                f"review-{a}",
                "Link",
                label=review_label,
                action=Action("PUT", f"/profile/appointments/{a}/approve"),
            )
        )
        children.append(
            el(
                f"chat-{a}",
                "Link",
                label="Chat",
                action=Action("PUT", chat_endpoint(a)),
                props={"panel": "chat"},
            )
        )
    else:
        children.append(
            el(f"offers-{a}", "Link", label="Open", action=Action("PUT", f"/profile/appointments/{a}/offers"))
        )
    return el(f"appointment-{a}", "Row", *children, props={"appointment": a})


def render(views: Sequence[AppointmentView], actor: Actor, *, now: datetime, layout: Layout, timeout: int) -> Page:
    grouped: dict[str, list[AppointmentView]] = {key: [] for key, _ in SECTIONS}
    for view in views:
        grouped[section_of(view, now)].append(view)
    grouped["past"].reverse()  # most recent first
    elements: list[Element] = [el("title", "Heading", value="Appointments")]
    for key, label in SECTIONS:
        rows = [row(v, actor) for v in grouped[key]]
        empty = el(f"{key}-empty", "Caption", value="Nothing here.", visible=not rows)
        elements.append(el(key, "Section", empty, *rows, label=f"{label} ({len(rows)})"))
    return Page(
        screen=SCREEN,
        title="Appointments",
        endpoint=ENDPOINT,
        poll=ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )
