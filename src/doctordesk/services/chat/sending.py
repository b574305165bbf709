"""Sending a chat message: the message and its file stored in one transaction (idempotent per client message id,
rate-limited per sender, the thread row locked so sends are ordered), the event for the thread and the pushes, and
the sender's chat brought up to date after commit: appended to the sender's page when that page is current, else
rendered again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.chat.messages import (
    AttachmentView,
    Cursor,
    MessageView,
    check_send,
    may_write,
    require_chat_role,
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
from doctordesk.screens.chat import append as chat_append
from doctordesk.screens.chat import screen
from doctordesk.screens.hashing import Parts, parts_of
from doctordesk.screens.protocol import Layout, UpdateSet, p_update
from doctordesk.screens.state import Revision, Token, Viewer
from doctordesk.services.chat import shared_pages
from doctordesk.services.chat.conversation import Window, chat_appointment, join_state, load_more, split_state
from doctordesk.services.chat.drafts import clear_in
from doctordesk.services.chat.file_checking import check_upload, read_checked, storing
from doctordesk.services.uow import unit_of_work
from doctordesk.store import chat_repo, chat_sends

MESSAGE_EVENT = EventKind.CHAT_MESSAGE


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
    page = await _client_page(rt, actor, token, form.appointment_id)
    sent: Sent | None = None
    try:
        for attempt in (1, 2):
            try:
                sent = await _store_message(rt, actor, form, checked, page)
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
    update = _appended(rt, actor, page, layout=layout, sent=sent) if page is not None and sent is not None else None
    rt.metrics.chat_send_answers.labels("appended" if update is not None else "rendered").inc()
    if update is None:  # a retry, or a page the shortcut cannot build on: the chat rendered again
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
    await shared_pages.keep(rt, actor, form.appointment_id, Token.parse(split_state(update.state)[0]))
    return update


@dataclass(frozen=True, slots=True)
class ClientPage:
    """The sender's page as its state token names it: a window of this chat, in the reader's language, younger
    than the screens' maximum age, still in the page cache."""

    token: Token
    window: Window
    shown: chat_append.Shown
    parts: Parts | None  # the canonical JSON of its elements, when it was made from another page


async def _client_page(rt: Runtime, actor: Actor, token: str | None, appointment_id: int) -> ClientPage | None:
    """The page the token names, when it was handed to this sender (another viewer's token names no page); made
    by another process on the shared bus, taken from the bus (``shared_pages``)."""
    inner, window = split_state(token)
    parsed = rt.screens.read(inner, Viewer.of(actor), screen.topics(appointment_id, actor.user_id))
    if parsed is None or window is None or window.appointment_id != appointment_id:
        return None
    if not rt.screens.young(parsed, rt.wall()):
        return None
    await shared_pages.fetch(rt, actor, appointment_id, parsed)
    cached = rt.screens.cache.entry(parsed.content)
    if cached is None:
        return None
    old, parts = cached
    shown = chat_append.shown(old, start_id=window.start_id, marker_id=window.marker_id)
    return ClientPage(parsed, window, shown, parts) if shown is not None else None


@dataclass(frozen=True, slots=True)
class Sent:
    """A message just stored, with what the sender's answer needs from the send's transaction."""

    appointment: AppointmentView
    message: MessageView
    newer: list[MessageView] | None  # what others wrote since the sender's page (None: not known)
    positions: chat_repo.ReadPositions  # after the send
    revision: Revision  # the sender's chat's topics before any of this was read
    own_events: int  # what the send published (the answer shows it: ``ScreenStates.follow``)


def _appended(rt: Runtime, actor: Actor, page: ClientPage, *, layout: Layout, sent: Sent) -> UpdateSet | None:
    """The answer built from the sender's page (``screens.chat.append``) without rendering the chat again: what
    others wrote since the page (read with the thread locked) and the sent message appended. None when that does
    not give what a render gives."""
    if sent.newer is None:
        return None
    message, appointment, window = sent.message, sent.appointment, page.window
    state = screen.ChatState(
        appointment=appointment,
        viewer=actor,
        messages=(*sent.newer, message),
        has_older=False,
        marker_id=window.marker_id,
        viewer_read=message.cursor,
        doctor_read=sent.positions.of(appointment.doctor.id),
        support_read=sent.positions.support,
        can_write=may_write(actor, doctor_id=appointment.doctor.id),
        max_chars=rt.settings.max_message_chars,
        max_upload_bytes=rt.settings.max_upload_bytes,
    )
    timeout = rt.settings.poll_chat_seconds
    appended = chat_append.append(page.shown, state, layout=layout, timeout=timeout, max_messages=chat_repo.MAX_WINDOW)
    if appended is None:
        return None
    new = rt.screens.follow(
        page.token,
        viewer=Viewer.of(actor),
        topics=screen.topics(appointment.id, actor.user_id),
        revision=sent.revision,
        own_events=sent.own_events,
        screen=screen.SCREEN,
        title=appended.title,
        poll=screen.LOAD_MORE_ENDPOINT,
        elements=appended.elements,
        # The container's children are most of the page: their JSON is kept for the next send's hash.
        parts=parts_of(appended.messages, page.parts),
    )
    start = window.start_id or (sent.newer[0].id if sent.newer else message.id)
    shown = Window(appointment.id, start, window.marker_id)
    return UpdateSet(screen.SCREEN, join_state(new, shown), timeout, appended.patches)


async def _newer(
    session: AsyncSession, thread: chat_sends.LockedThread, shown: chat_append.Shown, page_size: int
) -> list[MessageView] | None:
    """What others wrote since the sender's page (the thread locked: nothing more can come), oldest first; None
    when the page also lacks messages inside its window, or a render would show another window."""
    if thread.created:
        return [] if not shown.ids else None
    if thread.last_message_id is not None and thread.last_message_id == shown.newest_id:
        return []  # the newest message written before this one is the page's: none since
    if shown.first is None or shown.newest is None:  # the page showed no message: a render shows the newest page
        views, more = await chat_repo.latest(session, thread.id, page_size)
        return views if not more and len(views) < page_size else None
    if await chat_repo.count_between(session, thread.id, shown.first, shown.newest) != len(shown.ids):
        return None
    return await chat_repo.after(session, thread.id, shown.newest, chat_repo.MAX_WINDOW)


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


async def _store_message(
    rt: Runtime,
    actor: Actor,
    form: SendForm,
    checked: CheckedFile | ValidationFailed | None,
    page: ClientPage | None,
) -> Sent | None:
    """Store the message; None when this sender stored it already under the client message id."""
    settings = rt.settings
    now = rt.clock.now()
    topics = screen.topics(form.appointment_id, actor.user_id)
    async with unit_of_work(rt) as uow:
        # As a render does: where the chat's topics stand before anything the answer shows is read.
        revision = rt.screens.revision(topics)
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
        newer = await _newer(session, thread, page.shown, settings.chat_page_size) if page is not None else None
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
    return Sent(appointment, message, newer, positions, revision, len(uow.events))


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
