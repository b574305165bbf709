"""Sending a chat message: the message and its file stored in one transaction (idempotent per client message id,
rate-limited per sender, the thread row locked so sends are ordered), the event for the thread and the pushes, and
the sender's chat brought up to date."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain import files
from doctordesk.domain.appointments import AppointmentView
from doctordesk.domain.chat import Cursor, check_send, require_chat_role, retry_after
from doctordesk.domain.errors import TooManyRequests, ValidationFailed
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    SUPPORT_TOPIC,
    DomainEvent,
    doctor_topic,
    thread_topic,
    user_topic,
)
from doctordesk.domain.file_check import CheckedFile
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import Layout, UpdateSet, p_update
from doctordesk.services.chat import chat_appointment, join_state, load_more, split_state
from doctordesk.services.file_checking import check_upload, read_checked, storing
from doctordesk.services.uow import unit_of_work
from doctordesk.store import chat_repo
from doctordesk.store.chat_tables import ChatMessage, ChatThread
from doctordesk.store.tables import User

MESSAGE_EVENT = "chat-message"


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


async def send_message(rt: Runtime, actor: Actor, form: SendForm, *, token: str | None, layout: Layout) -> UpdateSet:
    """Store a message (and its file) in one transaction, then answer with the sender's chat brought up to date:
    the new message appended and the input cleared. A retry with the same client message id stores nothing new
    and answers the same."""
    require_chat_role(actor)
    # The file is checked before the transaction, so no connection or thread lock is held while it is parsed.
    checked = await check_upload(form.upload.file) if form.upload is not None else None
    try:
        for attempt in (1, 2):
            try:
                await _store_message(rt, actor, form, checked)
                break
            except IntegrityError:
                # A concurrent send created the thread first, or a concurrent retry with the same client message id
                # stored the message: then that message is this send's result.
                if form.client_message_id is not None:
                    async with rt.db.read() as session:
                        if await _existing(session, actor, form) is not None:
                            break
                if attempt == 2:
                    raise
    finally:
        if isinstance(checked, CheckedFile):
            checked.file.close()  # the re-encoded image's temporary file (closing the upload twice is harmless)
    inner, window = split_state(token)
    if window is not None and window.appointment_id != form.appointment_id:
        inner, window = None, None
    update = await load_more(
        rt,
        actor,
        join_state(inner, window) if inner and window else None,
        layout=layout,
        appointment_id=form.appointment_id,
        fresh=True,
    )
    update.patches += [p_update("content", value=""), p_update("upload", value=None)]
    return update


async def _existing(session: AsyncSession, actor: Actor, form: SendForm) -> int | None:
    """The message this sender already stored under the client message id (for another chat: refused)."""
    row = (
        await session.execute(
            select(ChatMessage.id, ChatThread.appointment_id)
            .join(ChatThread, ChatThread.id == ChatMessage.thread_id)
            .where(ChatMessage.sender_id == actor.user_id, ChatMessage.client_message_id == form.client_message_id)
        )
    ).first()
    if row is None:
        return None
    if row[1] != form.appointment_id:
        raise ValidationFailed(fields={"client-message-id": N_("Already used for a message in another chat.")})
    message_id: int = row[0]
    return message_id


async def _store_message(
    rt: Runtime, actor: Actor, form: SendForm, checked: CheckedFile | ValidationFailed | None
) -> None:
    settings = rt.settings
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        appointment = await chat_appointment(session, actor, form.appointment_id)
        if form.client_message_id is not None and await _existing(session, actor, form) is not None:
            return
        check_send(
            actor,
            doctor_id=appointment.doctor.id,
            chat_enabled=appointment.chat_enabled,
            content=form.content,
            has_file=form.upload is not None,
            max_chars=settings.max_message_chars,
        )
        if form.upload is not None:
            files.check_filename(form.upload.filename)
        if isinstance(checked, ValidationFailed):
            raise checked
        recent = (
            await session.scalars(
                select(ChatMessage.created_at)
                .where(ChatMessage.sender_id == actor.user_id, ChatMessage.created_at > now - timedelta(minutes=1))
                .order_by(ChatMessage.created_at.desc())
                .limit(max(1, settings.chat_send_per_minute))
            )
        ).all()
        wait = retry_after(list(recent), now=now, per_minute=settings.chat_send_per_minute)
        if wait is not None:
            raise TooManyRequests(N_("Too many messages. Wait a moment before sending again."), retry_after=wait)
        thread_id = await _thread_for_update(session, appointment.id, now)
        attachment_id = None
        if form.upload is not None and checked is not None:
            attachment_id = await _store_file(session, actor, form.upload, checked, now)
        message = ChatMessage(
            thread_id=thread_id,
            sender_id=actor.user_id,
            content=form.content,
            created_at=now,
            attachment_id=attachment_id,
            client_message_id=form.client_message_id,
        )
        session.add(message)
        await session.flush()
        thread = await session.get(ChatThread, thread_id)
        assert thread is not None
        thread.last_message_id = message.id
        await chat_repo.mark_read(
            session, thread_id=thread_id, user_id=actor.user_id, up_to=Cursor(now, message.id), now=now
        )
        notify = await _recipients(session, actor, appointment, thread_id)
        uow.emit(
            DomainEvent(
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
                    "message_id": message.id,
                    "sender_id": actor.user_id,
                },
                notify_user_ids=notify,
                # The push text never carries the message: it travels through a partner's servers.
                notify_text=Text(
                    "New message from {name} about appointment #{id}", name=actor.display_name, id=appointment.id
                ),
            )
        )


async def _store_file(session: AsyncSession, actor: Actor, upload: Upload, checked: CheckedFile, now: datetime) -> int:
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


async def _thread_for_update(session: AsyncSession, appointment_id: int, now: datetime) -> int:
    """The appointment's thread, created on the first message; its row is locked until commit, so the sends of a
    thread are ordered and ``last_activity_at`` follows them."""
    thread = await session.scalar(
        select(ChatThread).where(ChatThread.appointment_id == appointment_id).with_for_update()
    )
    if thread is None:
        thread = ChatThread(appointment_id=appointment_id, created_at=now, last_activity_at=now)
        session.add(thread)
        await session.flush()
    else:
        thread.last_activity_at = now
    return thread.id


async def _recipients(
    session: AsyncSession, actor: Actor, appointment: AppointmentView, thread_id: int
) -> tuple[int, ...]:
    """Who gets a push: the doctor when support writes; when the doctor writes, the agents who have written in the
    thread, or every active agent while none has."""
    if actor.user_id != appointment.doctor.id:
        return (appointment.doctor.id,)
    agents = (
        await session.scalars(
            select(ChatMessage.sender_id)
            .join(User, User.id == ChatMessage.sender_id)
            .where(ChatMessage.thread_id == thread_id, User.role == Role.SUPPORT.value)
            .distinct()
        )
    ).all()
    if not agents:
        agents = (
            await session.scalars(select(User.id).where(User.role == Role.SUPPORT.value, User.active.is_(True)))
        ).all()
    return tuple(sorted(agents))
