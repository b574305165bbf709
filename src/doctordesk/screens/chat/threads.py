"""The support agents' thread list: every chat thread by last activity, with its unread count and latest message."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.chat.messages import excerpt
from doctordesk.domain.events import CLINIC_TOPIC, SUPPORT_TOPIC, user_topic
from doctordesk.domain.keyset import Slice, count_label
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_local
from doctordesk.screens.chat.screen import page_endpoint
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown

SCREEN = "chat-threads"
ENDPOINT = "/profile/messages/threads"


SECTION = "threads"
MORE_ENDPOINT = "/profile/messages/threads/more"


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    thread_id: int
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
    return (SUPPORT_TOPIC, user_topic(viewer_id), CLINIC_TOPIC)  # the clinic: doctors' names, time zones


def shown(viewer_id: int) -> Shown:
    return Shown(SCREEN, ENDPOINT, topics(viewer_id), repeatable=True)


def row(thread: ThreadSummary) -> Element:
    a = thread.appointment_id
    preview = excerpt(thread.latest_content or "")
    if thread.latest_has_file:
        preview = f"{preview} (file)" if preview else "(file)"
    return el(
        f"thread-{a}",
        "Row",
        el(f"thread-title-{a}", "Regular", value=f"#{a} · {thread.doctor_name} · {thread.patient_name}"),
        el(
            f"thread-appointment-{a}",
            "Regular",
            value=format_local(thread.appointment_start, thread.timezone),
            label=_("Appointment"),
        ),
        el(f"thread-latest-{a}", "Text", value=preview, label=thread.latest_sender or ""),
        el(
            f"thread-activity-{a}",
            "Regular",
            value=format_local(thread.last_activity_at, thread.timezone),
            props={"datetime": thread.last_activity_at.isoformat()},
        ),
        el(
            f"unread-{a}",
            "Badge",
            value=count_label(thread.unread),
            label=_("unread messages"),
            visible=thread.unread > 0,
            props={"tone": "attention"},
        ),
        el(f"open-{a}", "Link", label=_("Open chat"), action=Action("PUT", page_endpoint(a)), props={"panel": "chat"}),
        props={"appointment": a, "unread": thread.unread, "chat_enabled": thread.chat_enabled},
    )


def render(threads: Slice[ThreadSummary], *, layout: Layout, timeout: int) -> Page:
    """The threads shown, most recently active first, with a "show more" link while older ones exist."""
    rows = [row(t) for t in threads.rows]
    total = len(rows) if threads.total is None else threads.total
    count = count_label(total)
    unread = sum(1 for t in threads.rows if t.unread)
    more = (
        el("threads-limit", "Caption", value=_("The list shows no more conversations."))
        if threads.at_limit and threads.more
        else el(
            "threads-more",
            "Link",
            label=_("Show older conversations"),
            visible=threads.more,
            action=Action("PATCH", MORE_ENDPOINT),
        )
    )
    elements = [
        el("title", "Heading", value=_("Support chats")),
        el(
            SECTION,
            "Section",
            el("threads-empty", "Caption", value=_("No conversations yet."), visible=not rows),
            *rows,
            more,
            label=_("Conversations ({count}, {unread} unread)", count=count, unread=unread),
        ),
    ]
    return Page(
        screen=SCREEN,
        title=_("Support chats"),
        endpoint=ENDPOINT,
        poll=ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )
