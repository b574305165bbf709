"""Domain events: what happened, and which topics (screens' data) it touches.

Topics name the data a screen shows, so the real-time router and the poll's change check can tell which screens
an event concerns without knowing screens:

    doctor:{user_id}        the doctor's appointment list
    appointment:{id}        one appointment (its Review and Approve screen, the patient's offers)
    patient:{patient_id}    the patient's own view
    thread:{appointment_id} the chat thread of one appointment
    support                 the support agents' thread list
    appointments            every appointment (lists of support agents and admins)
    user:{user_id}          anything addressed to one user (token revocation, unread state)
    clinic                  the clinic's reference data: doctors' names and settings, locations, work hours and
                            their exceptions, fees, insurance policies (changed by the administration)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctordesk.domain.event_kinds import EventKind


@dataclass(frozen=True, slots=True)
class DomainEvent:
    """One event: its ``kind`` (an ``EventKind``: never a free string) with its payload ``data`` (the kind's schema,
    ``event_kinds.PAYLOADS``)."""

    kind: EventKind
    topics: tuple[str, ...]
    data: dict[str, Any] = field(default_factory=dict)
    # Users to notify by push (mobile) with this optional text; empty: no push.
    notify_user_ids: tuple[int, ...] = ()
    notify_text: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, EventKind):  # a string from outside: ``event_kinds.checked_kind`` first
            raise TypeError(f"an event's kind is an EventKind, not {self.kind!r}")


def doctor_topic(user_id: int) -> str:
    return f"doctor:{user_id}"


def appointment_topic(appointment_id: int) -> str:
    return f"appointment:{appointment_id}"


def patient_topic(patient_id: int) -> str:
    return f"patient:{patient_id}"


def thread_topic(appointment_id: int) -> str:
    return f"thread:{appointment_id}"


def user_topic(user_id: int) -> str:
    return f"user:{user_id}"


SUPPORT_TOPIC = "support"
ALL_APPOINTMENTS_TOPIC = "appointments"
CLINIC_TOPIC = "clinic"
# Administration screens change when an admin changes something through them: each action publishes this topic,
# so every admin's open screens catch up on their next poll or real-time update.
ADMIN_TOPIC = "admin"
CLINIC_CHANGED = EventKind.CLINIC_CHANGED


def clinic_changed() -> DomainEvent:
    """The clinic's reference data changed (any of it: the screens that show some re-read all of it)."""
    return DomainEvent(CLINIC_CHANGED, (CLINIC_TOPIC,))
