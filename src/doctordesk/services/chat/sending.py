"""Sending a chat message: the message and its file stored in one transaction (idempotent per client message id,
rate-limited per sender, the thread row locked so sends are ordered), the event for the thread and the pushes. The
sender's chat brought up to date after commit is the screen's (``services.chat.sending_screen``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Generic, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.chat.messages import (
    AttachmentView,
    Cursor,
    MessageView,
    check_send,
    retry_after,
)
from doctordesk.domain.errors import TooManyRequests, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    SUPPORT_TOPIC,
    DomainEvent,
    doctor_topic,
    thread_topic,
    user_topic,
)
from doctordesk.domain.files import attachments as attachment_rules
from doctordesk.domain.files.check import CheckedFile
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.chat.access import chat_appointment
from doctordesk.services.chat.drafts import clear_in
from doctordesk.services.chat.file_checking import read_checked, storing
from doctordesk.services.uow import unit_of_work
from doctordesk.store import chat_repo, chat_sends

MESSAGE_EVENT = EventKind.CHAT_MESSAGE

R = TypeVar("R")
# What others wrote since the sender's page, read with the thread locked (None: not known).
Newer = Callable[[AsyncSession, chat_sends.LockedThread], Awaitable[list[MessageView] | None]]


@dataclass(frozen=True, slots=True)
class Upload:
    """A received file part: the client's name and declared type (neither is trusted) and the file it was written
    to (seekable; the caller closes it)."""

    filename: str | None
    declared_type: str | None
    file: IO[bytes]


@dataclass(frozen=True, slots=True)
class SendForm:
    appointment_id: int
    content: str
    upload: Upload | None = None
    client_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Sent(Generic[R]):
    """A message just stored, with what the sender's answer needs from the send's transaction."""

    appointment: AppointmentView
    message: MessageView
    newer: list[MessageView] | None  # what others wrote since the sender's page (None: not known)
    positions: chat_repo.ReadPositions  # after the send
    revision: R  # the sender's chat's topics before any of this was read (``store``'s ``revision``)
    own_events: int  # what the send published (the answer shows it: ``ScreenStates.follow``)


async def _existing(session: AsyncSession, actor: Actor, form: SendForm) -> int | None:
    """The message this sender already stored under the client message id (for another chat: refused)."""
    if form.client_message_id is None:
        return None
    found = await chat_sends.existing(session, actor.user_id, form.client_message_id)
    if found is None:
        return None
    if found[1] != form.appointment_id:
        raise ValidationFailed(fields={"client-message-id": N_("Already used for a message in another chat.")})
    return found[0]


async def store(
    rt: Runtime,
    actor: Actor,
    form: SendForm,
    checked: CheckedFile | ValidationFailed | None,
    *,
    revision: Callable[[], R],
    newer: Newer | None,
) -> Sent[R] | None:
    """Store a message (and its file) in one transaction; None when this sender stored it already under the client
    message id (a retry stores nothing new). ``revision`` is called first in the transaction, before anything the
    sender's answer shows is read; ``newer`` reads what others wrote since the sender's page, with the thread
    locked (None: not known)."""
    for attempt in (1, 2):
        try:
            return await _store_message(rt, actor, form, checked, revision, newer)
        except IntegrityError:
            # A concurrent send created the thread first, or a concurrent retry with the same client message id
            # stored the message: then that message is this send's result.
            if form.client_message_id is not None:
                async with rt.db.read() as session:
                    if await _existing(session, actor, form) is not None:
                        return None
            if attempt == 2:
                raise
    return None


async def _store_message(
    rt: Runtime,
    actor: Actor,
    form: SendForm,
    checked: CheckedFile | ValidationFailed | None,
    revision: Callable[[], R],
    newer: Newer | None,
) -> Sent[R] | None:
    """Store the message; None when this sender stored it already under the client message id."""
    settings = rt.settings
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        # As a render does: where the chat's topics stand before anything the answer shows is read.
        before = revision()
        session = uow.session
        appointment = await chat_appointment(session, actor, form.appointment_id)
        if form.client_message_id is not None and await _existing(session, actor, form) is not None:
            return None
        file = await _check_send(session, settings, actor, appointment, form, checked, now)
        attachment = None
        if form.upload is not None and file is not None:  # before the thread is locked: it needs no thread
            attachment = await _store_file(session, actor, form.upload, file, now)
        # The sender's draft of this thread is sent: it goes with the message, in the same transaction.
        await clear_in(session, actor.user_id, appointment.id)
        thread = await chat_sends.lock_thread(session, appointment.id, now)
        # The message's time is taken with the thread locked and never before the thread's newest (another instance's
        # clock may be behind): a thread's order is the order its sends committed in, so a read position never
        # passes a message committed after it was taken.
        at = max(rt.clock.now(), thread.last_at) if thread.last_at is not None else rt.clock.now()
        since = await newer(session, thread) if newer is not None else None
        inserted = await chat_sends.insert_message(
            session,
            thread_id=thread.id,
            sender_id=actor.user_id,
            content=form.content,
            at=at,
            attachment_id=attachment.id if attachment is not None else None,
            client_message_id=form.client_message_id,
        )
        await chat_repo.mark_read(
            session, thread_id=thread.id, user_id=actor.user_id, up_to=Cursor(at, inserted.id), now=at
        )
        positions = await chat_repo.read_positions(session, thread.id)
        notify = await _recipients(session, actor, appointment, thread.id)
        uow.emit(_message_event(actor, appointment, thread.id, inserted.id, notify))
    message = MessageView(
        inserted.id, actor.user_id, inserted.sender_name, inserted.sender_role, form.content, at, attachment
    )
    # The send's own events were published after commit: the answer's token covers them (``follow``).
    return Sent(appointment, message, since, positions, before, len(uow.events))


async def _check_send(
    session: AsyncSession,
    settings: Settings,
    actor: Actor,
    appointment: AppointmentView,
    form: SendForm,
    checked: CheckedFile | ValidationFailed | None,
    now: datetime,
) -> CheckedFile | None:
    """Refuse a send the chat rules, the file check or the sender's rate do not allow; the checked file, if any."""
    check_send(
        actor,
        doctor_id=appointment.doctor.id,
        chat_enabled=appointment.chat_enabled,
        content=form.content,
        has_file=form.upload is not None,
        max_chars=settings.max_message_chars,
    )
    if form.upload is not None:
        attachment_rules.check_filename(form.upload.filename)
    if isinstance(checked, ValidationFailed):
        raise checked
    if settings.chat_send_per_minute > 0:
        recent = await chat_sends.sent_since(
            session, actor.user_id, now - timedelta(minutes=1), settings.chat_send_per_minute
        )
        wait = retry_after(recent, now=now, per_minute=settings.chat_send_per_minute)
        if wait is not None:
            raise TooManyRequests(N_("Too many messages. Wait a moment before sending again."), retry_after=wait)
    return checked


def _message_event(
    actor: Actor, appointment: AppointmentView, thread_id: int, message_id: int, notify: tuple[int, ...]
) -> DomainEvent:
    """A message was sent: to the thread, its doctor, support and the lists; pushed to ``notify``."""
    return DomainEvent(
        MESSAGE_EVENT,
        topics=(
            thread_topic(appointment.id),
            doctor_topic(appointment.doctor.id),
            user_topic(appointment.doctor.id),
            SUPPORT_TOPIC,
            ALL_APPOINTMENTS_TOPIC,
        ),
        data={
            "appointment_id": appointment.id,
            "thread_id": thread_id,
            "message_id": message_id,
            "sender_id": actor.user_id,
        },
        notify_user_ids=notify,
        # The push text never carries the message: it travels through a partner's servers.
        notify_text=Text("New message from {name} about appointment #{id}", name=actor.display_name, id=appointment.id),
    )


async def _store_file(
    session: AsyncSession, actor: Actor, upload: Upload, checked: CheckedFile, now: datetime
) -> AttachmentView:
    """The attachment row; the file's bytes are in memory only here, a bounded number of sends at a time."""
    async with storing():
        return await chat_repo.add_attachment(
            session,
            uploader_id=actor.user_id,
            filename=upload.filename,
            kind=checked.kind,
            data=await read_checked(checked),
            at=now,
        )


async def _recipients(
    session: AsyncSession, actor: Actor, appointment: AppointmentView, thread_id: int
) -> tuple[int, ...]:
    """Who gets a push: the doctor when support writes; when the doctor writes, the agents who have written in the
    thread, or every active agent while none has."""
    if actor.user_id != appointment.doctor.id:
        return (appointment.doctor.id,)
    agents = await chat_sends.agents_in_thread(session, thread_id) or await chat_sends.active_agents(session)
    return tuple(sorted(agents))
