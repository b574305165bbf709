"""Chat rules: who may read and write a thread, what a message may contain, and what is unread.

A thread belongs to one appointment. Its participants are the appointment's doctor and the support agents (any
thread); admins may read every thread but not write; patients have no access to this chat at all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.errors import ChatDisabled, Forbidden, ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_

CLIENT_MESSAGE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)


@dataclass(frozen=True, slots=True)
class Cursor:
    """A position in a thread: messages are ordered by (created_at, id), never by id alone."""

    created_at: datetime
    id: int

    def key(self) -> tuple[datetime, int]:
        return (self.created_at, self.id)


@dataclass(frozen=True, slots=True)
class MessageView:
    id: int
    sender_id: int
    sender_name: str
    sender_role: Role
    content: str
    created_at: datetime
    attachment: AttachmentView | None = None

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.created_at, self.id)


@dataclass(frozen=True, slots=True)
class AttachmentView:
    id: int
    filename: str
    mime: str
    size: int


def may_read(actor: Actor, *, doctor_id: int) -> bool:
    """The appointment's doctor, every support agent and admins read a thread; patients and other doctors don't."""
    if actor.role in (Role.SUPPORT, Role.ADMIN):
        return True
    return actor.role is Role.DOCTOR and actor.user_id == doctor_id


def may_write(actor: Actor, *, doctor_id: int) -> bool:
    """The appointment's doctor and support agents write; admins only read (they audit, they don't answer)."""
    if actor.role is Role.SUPPORT:
        return True
    return actor.role is Role.DOCTOR and actor.user_id == doctor_id


def require_chat_role(actor: Actor) -> None:
    """Patients have no access to the doctors' support chat (403 whatever the appointment: nothing to probe)."""
    if actor.role is Role.PATIENT:
        raise Forbidden(N_("Patients have no access to this chat."))


def check_send(
    actor: Actor,
    *,
    doctor_id: int,
    chat_enabled: bool,
    content: str,
    has_file: bool,
    max_chars: int,
) -> None:
    """The rules of a send, in the order a user meets them. Raises; returns nothing when the send may go ahead."""
    if not may_write(actor, doctor_id=doctor_id):
        raise Forbidden(N_("You can read this chat but not write in it."))
    if not chat_enabled:
        raise ChatDisabled()
    check_content(content, has_file=has_file, max_chars=max_chars)


def check_content(content: str, *, has_file: bool, max_chars: int) -> None:
    """Text is stored exactly as sent; it must say something (or come with a file) and stay within the limit."""
    if not content.strip() and not has_file:
        raise ValidationFailed(fields={"content": N_("Write a message or attach a file.")})
    problem = text_problem(content, max_chars=max_chars, multiline=True)
    if problem is not None:
        raise ValidationFailed(fields={"content": problem})


def check_client_message_id(value: str | None) -> str | None:
    """The optional idempotency key of a send: up to 64 letters, digits, '-' or '_'."""
    if value is None or value == "":
        return None
    if not CLIENT_MESSAGE_ID.fullmatch(value):
        raise ValidationFailed(fields={"client-message-id": N_("Up to 64 letters, digits, '-' or '_'.")})
    return value


def is_outgoing(message: MessageView, viewer_id: int) -> bool:
    """From the viewer's side: what the viewer sent is outgoing, everything else (the doctor, other agents) incoming."""
    return message.sender_id == viewer_id


def is_unread(message: MessageView, *, reader_id: int, read_up_to: Cursor | None) -> bool:
    """A message is unread for a reader when someone else sent it after the reader's last read position."""
    if message.sender_id == reader_id:
        return False
    return read_up_to is None or message.cursor.key() > read_up_to.key()


def first_unread(messages: Sequence[MessageView], *, reader_id: int, read_up_to: Cursor | None) -> int | None:
    """The id of the first unread message (where the "new messages" marker goes), or None."""
    for m in messages:
        if is_unread(m, reader_id=reader_id, read_up_to=read_up_to):
            return m.id
    return None


def counterpart_read(
    message: MessageView, *, doctor_id: int, doctor_read: Cursor | None, support_read: Cursor | None
) -> bool:
    """The read flag of a sent message: has the other side read it? A doctor's message is read once any support
    agent has read it; a support agent's message once the doctor has."""
    position = support_read if message.sender_id == doctor_id else doctor_read
    return position is not None and position.key() >= message.cursor.key()


def latest(positions: Iterable[Cursor | None]) -> Cursor | None:
    """The furthest of several read positions."""
    best: Cursor | None = None
    for p in positions:
        if p is not None and (best is None or p.key() > best.key()):
            best = p
    return best


def excerpt(content: str, limit: int = 120) -> str:
    """A one-line preview of a message for lists (whitespace collapsed, cut at ``limit`` characters)."""
    flat = " ".join(content.split())
    flat = "".join(ch for ch in flat if unicodedata.category(ch) not in ("Cc", "Cf"))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def retry_after(sent_at: Sequence[datetime], *, now: datetime, per_minute: int) -> int | None:
    """The send rate limit over a sliding minute: None when a send is allowed now, else the seconds to wait.

    ``sent_at`` holds the sender's message times of the last minute (any order)."""
    if per_minute <= 0 or len(sent_at) < per_minute:
        return None
    ordered = sorted(sent_at, reverse=True)
    # The send becomes possible when the per_minute-th most recent message leaves the window.
    oldest_counted = ordered[per_minute - 1]
    wait = 60 - (now - oldest_counted).total_seconds()
    return max(1, int(wait) + (0 if wait == int(wait) else 1))
