"""The Chat screen (spec 2.3.1): a thread's messages from the viewer's side and the composer.

Nesting (the spec's levels are depths): the level-2 elements (``load-more``, the message groups, the new-message
marker, ``newer-messages-marker``) are the children of the level-1 ``spacer``, the flexible area between header
and composer. On mobile that ``spacer`` sits inside the M-1 ``scroll`` Scroller, after the M-1 ``tag``; on
desktop the D-1 ``spacer`` and ``close`` come first and the popup panel scrolls. Read depth first, both layouts
give exactly the order of 2.3.1. Older messages are prepended to ``spacer``'s children, newer ones inserted
before ``newer-messages-marker``. Message text travels as a plain string in ``value``: clients show it as text,
never as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.chat.messages import Cursor, MessageView, counterpart_read, is_outgoing, is_unread
from doctordesk.domain.events import CLINIC_TOPIC, appointment_topic, thread_topic, user_topic
from doctordesk.domain.files.attachments import ALLOWED
from doctordesk.domain.roles import Actor, Role
from doctordesk.i18n import N_, _
from doctordesk.i18n.formats import format_local
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown

SCREEN = "chat"
PAGE_ENDPOINT = "/profile/messages/user-chat"
LOAD_MORE_ENDPOINT = "/profile/messages/load-more"
SEND_ENDPOINT = "/profile/messages/send-message"
CLOSE_ENDPOINT = "/profile/messages/close"
ATTACHMENT_ENDPOINT = "/profile/messages/attachments"
CONTAINER = "spacer"  # the parent of the message elements in both layouts
NEWER_MARKER = "newer-messages-marker"
PROMPT = N_("Write a message…")


@dataclass(frozen=True, slots=True)
class ChatState:
    """Everything the screen shows, read in one go by the service."""

    appointment: AppointmentView
    viewer: Actor
    messages: tuple[MessageView, ...]  # the window, oldest first
    has_older: bool
    marker_id: int | None  # first message that was unread when the chat was opened
    viewer_read: Cursor | None
    doctor_read: Cursor | None
    support_read: Cursor | None
    can_write: bool
    max_chars: int
    max_upload_bytes: int


def topics(appointment_id: int, viewer_id: int) -> tuple[str, ...]:
    """The thread, the appointment (its time is in the subject; a change of its doctor changes who may read) and
    the viewer; the clinic (the doctor's name, the location's time zone)."""
    return (thread_topic(appointment_id), appointment_topic(appointment_id), user_topic(viewer_id), CLINIC_TOPIC)


def shown(appointment_id: int, viewer_id: int) -> Shown:
    """Repeatable: who may read it changes only with the appointment (its topic), the viewer's role or account
    (the auth cache)."""
    return Shown(SCREEN, LOAD_MORE_ENDPOINT, topics(appointment_id, viewer_id), repeatable=True)


def page_endpoint(appointment_id: int) -> str:
    return f"{PAGE_ENDPOINT}?{urlencode({'appointment-id': appointment_id})}"


def attachment_href(attachment_id: int) -> str:
    return f"{ATTACHMENT_ENDPOINT}/{attachment_id}"


def message_elements(message: MessageView, state: ChatState) -> list[Element]:
    """The elements of one message: ``incoming-{id}``, or a 10% ``spacer`` and ``outgoing-{id}``."""
    viewer = state.viewer.user_id
    outgoing = is_outgoing(message, viewer)
    if outgoing:
        read = counterpart_read(
            message,
            doctor_id=state.appointment.doctor.id,
            doctor_read=state.doctor_read,
            support_read=state.support_read,
        )
    else:
        read = not is_unread(message, reader_id=viewer, read_up_to=state.viewer_read)
    children: list[Element] = []
    if message.attachment is not None:
        a = message.attachment
        children.append(
            el(
                "attachmentViewer",
                "Attachment",
                id=f"attachmentViewer~{message.id}",
                label=a.filename,
                value=a.filename,
                props={"href": attachment_href(a.id), "mime": a.mime, "size": a.size},
            )
        )
    ref = f"{'outgoing' if outgoing else 'incoming'}-{message.id}"
    group = el(
        ref,
        "Group",
        *children,
        label=message.sender_name,
        value=message.content,
        props={
            "width": "90%",
            "direction": "outgoing" if outgoing else "incoming",
            "sender": message.sender_name,
            "sender_id": message.sender_id,
            "sender_role": message.sender_role.value,
            "time": message.created_at.isoformat(),
            "time_text": format_local(message.created_at, state.appointment.location.timezone),
            "read": read,
            "message": message.id,
        },
    )
    if outgoing:
        return [el("spacer", "Spacer", id=f"spacer~{message.id}", props={"width": "10%"}), group]
    return [group]


def load_more_link(state: ChatState) -> Element:
    oldest = state.messages[0].id
    query = urlencode({"appointment-id": state.appointment.id, "before": oldest})
    return el(
        "load-more",
        "Link",
        label=_("Load older messages"),
        action=Action("PATCH", f"{LOAD_MORE_ENDPOINT}?{query}"),
    )


def new_message_marker() -> list[Element]:
    return [
        el("new-message-line", "Line", id="new-message-line~before"),
        el("new-message", "Caption", value=_("New messages")),
        el("new-message-line", "Line", id="new-message-line~after"),
    ]


def thread_elements(state: ChatState) -> list[Element]:
    """The level-2 children of the container: load-more, messages with the marker, newer-messages-marker."""
    items: list[Element] = []
    if state.has_older and state.messages:
        items.append(load_more_link(state))
    for message in state.messages:
        if message.id == state.marker_id:
            items.extend(new_message_marker())
        items.extend(message_elements(message, state))
    items.append(el(NEWER_MARKER, "Spacer", visible=False, props={"marker": "newer"}))
    return items


DRAFT_ENDPOINT = "/profile/messages/draft"


def composer(state: ChatState) -> list[Element]:
    a = state.appointment
    enabled = state.can_write and a.chat_enabled
    elements: list[Element] = []
    if not a.chat_enabled:
        elements.append(
            el(
                "chat-blocked",
                "Notice",
                value=_("Chat is disabled for this appointment."),
                props={"tone": "warning", "code": "DOCTOR_COMMUNITY_CHAT_DISABLED"},
            )
        )
    elif not state.can_write:
        elements.append(
            el("chat-blocked", "Notice", value=_("You can read this chat but not write in it."), props={"tone": "info"})
        )
    accept = ",".join(t.mime for t in ALLOWED)
    elements += [
        el("line", "Line"),
        el(
            "content",
            "Edit",
            name="content",
            value="",
            placeholder=_(PROMPT),
            enabled=enabled,
            # Only writers keep a draft; the web app reads and writes it there (docs/chat.md#drafts).
            props={"multiline": True, "maxlength": state.max_chars}
            | ({"draft": f"{DRAFT_ENDPOINT}?{urlencode({'appointment-id': a.id})}"} if enabled else {}),
        ),
        el(
            "upload",
            "Upload",
            name="file",
            label=_("Attach a file"),
            enabled=enabled,
            props={"max_files": 1, "accept": accept, "max_bytes": state.max_upload_bytes},
        ),
        el(
            "send",
            "Link",
            label=_("Send"),
            enabled=enabled,
            action=Action("POST", SEND_ENDPOINT),
            # Clients keep send disabled while both of these are empty (spec 4.4, chat validation 1); a send that
            # cannot reach the service waits and goes again under the same client message id (docs/chat.md).
            props={"requires_one_of": ["content", "file"], "idempotency": "client-message-id"},
        ),
        el("appointment-id", "Hidden", name="appointment-id", value=str(a.id)),
    ]
    return elements


def subject(appointment: AppointmentView) -> str:
    """What the chat is about, as people name it: the patient and the appointment's local time (appointment
    numbers appear nowhere else)."""
    return f"{appointment.patient.name}, {format_local(appointment.start, appointment.location.timezone)}"


def render(state: ChatState, *, layout: Layout, timeout: int) -> Page:
    a = state.appointment
    close_query = urlencode({"appointment-id": a.id})
    container = el(CONTAINER, "Spacer", *thread_elements(state), props={"role": "messages"})
    header: list[Element]
    if layout == "desktop":
        close = Action("POST", f"{CLOSE_ENDPOINT}?{close_query}")
        header = [
            el("spacer", "Spacer", id="spacer~popup", platform="desktop"),
            el("close", "Link", label=_("Close"), platform="desktop", action=close),
            container,
        ]
    else:
        header = [
            # The spec's label naming the appointment id, with what people recognise it by.
            el(
                "tag",
                "Regular",
                label=_("Appointment #{id}", id=a.id),
                value=subject(a),
                platform="mobile",
                props={"appointment": a.id},
            ),
            el("scroll", "Scroller", container, platform="mobile"),
        ]
    elements = [*header, *composer(state)]
    other = a.doctor.name if state.viewer.role is not Role.DOCTOR else _("Support")
    return Page(
        screen=SCREEN,
        title=_("Chat · {subject} · {other}", subject=subject(a), other=other),
        endpoint=page_endpoint(a.id),
        poll=LOAD_MORE_ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )
