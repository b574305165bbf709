"""The support agents' thread list: every chat thread by last activity, with its unread count and latest message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.appointments import format_local
from doctordesk.domain.chat import excerpt
from doctordesk.domain.events import SUPPORT_TOPIC, user_topic
from doctordesk.screens.chat import page_endpoint
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown

SCREEN = "chat-threads"
ENDPOINT = "/profile/messages/threads"


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    appointment_id: int
    doctor_name: str
    patient_name: str
    appointment_start: datetime
    timezone: str
    last_activity_at: datetime
    latest_sender: str | None
    latest_content: str | None
    latest_has_file: bool
    unread: int
    chat_enabled: bool


def topics(viewer_id: int) -> tuple[str, ...]:
    return (SUPPORT_TOPIC, user_topic(viewer_id))


def shown(viewer_id: int) -> Shown:
    return Shown(SCREEN, ENDPOINT, topics(viewer_id))


def row(t: ThreadSummary) -> Element:
    a = t.appointment_id
    preview = excerpt(t.latest_content or "")
    if t.latest_has_file:
        preview = f"{preview} (file)" if preview else "(file)"
    return el(
        f"thread-{a}",
        "Row",
        el(f"thread-title-{a}", "Regular", value=f"#{a} · {t.doctor_name} · {t.patient_name}"),
        el(
            f"thread-appointment-{a}",
            "Regular",
            value=format_local(t.appointment_start, t.timezone),
            label="Appointment",
        ),
        el(f"thread-latest-{a}", "Text", value=preview, label=t.latest_sender or ""),
        el(
            f"thread-activity-{a}",
            "Regular",
            value=format_local(t.last_activity_at, t.timezone),
            props={"datetime": t.last_activity_at.isoformat()},
        ),
        el(
            f"unread-{a}",
            "Badge",
            value=str(t.unread),
            label="unread messages",
            visible=t.unread > 0,
            props={"tone": "attention"},
        ),
        el(f"open-{a}", "Link", label="Open chat", action=Action("PUT", page_endpoint(a)), props={"panel": "chat"}),
        props={"appointment": a, "unread": t.unread, "chat_enabled": t.chat_enabled},
    )


def render(threads: Sequence[ThreadSummary], *, layout: Layout, timeout: int) -> Page:
    rows = [row(t) for t in threads]
    unread = sum(1 for t in threads if t.unread)
    elements = [
        el("title", "Heading", value="Support chats"),
        el(
            "threads",
            "Section",
            el("threads-empty", "Caption", value="No conversations yet.", visible=not rows),
            *rows,
            label=f"Conversations ({len(rows)}, {unread} unread)",
        ),
    ]
    return Page(
        screen=SCREEN,
        title="Support chats",
        endpoint=ENDPOINT,
        poll=ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )
