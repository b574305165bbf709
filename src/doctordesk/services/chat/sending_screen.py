"""The chat screen's answer to sending a message: the message stored (``services.chat.sending``), then the sender's
chat brought up to date after commit: appended to the sender's page when that page is current, else rendered
again."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.chat.messages import MessageView, may_write, require_chat_role
from doctordesk.domain.files.check import CheckedFile
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.screens.chat import append as chat_append
from doctordesk.screens.chat import screen
from doctordesk.screens.hashing import Parts, parts_of
from doctordesk.screens.protocol import Layout, UpdateSet, p_update
from doctordesk.screens.state import Revision, Token, Viewer
from doctordesk.services.chat import sending, shared_pages_screen
from doctordesk.services.chat.conversation_screen import Window, join_state, load_more, split_state
from doctordesk.services.chat.file_checking import check_upload
from doctordesk.store import chat_repo, chat_sends


async def send_message(
    rt: Runtime, actor: Actor, form: sending.SendForm, *, token: str | None, layout: Layout
) -> UpdateSet:
    """Store a message (and its file) in one transaction, then answer with the sender's chat brought up to date:
    the new message appended and the input cleared. A retry with the same client message id stores nothing new
    and answers the same."""
    require_chat_role(actor)
    # The file is checked before the transaction, so no connection or thread lock is held while it is parsed.
    checked = await check_upload(form.upload.file) if form.upload is not None else None
    page = await _client_page(rt, actor, token, form.appointment_id)
    topics = screen.topics(form.appointment_id, actor.user_id)
    newer = partial(_newer, shown=page.shown, page_size=rt.settings.chat_page_size) if page is not None else None
    try:
        sent = await sending.store(rt, actor, form, checked, revision=partial(rt.screens.revision, topics), newer=newer)
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
    await shared_pages_screen.keep(rt, actor, form.appointment_id, Token.parse(split_state(update.state)[0]))
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
    by another process on the shared bus, taken from the bus (``shared_pages_screen``)."""
    inner, window = split_state(token)
    parsed = rt.screens.read(inner, Viewer.of(actor), screen.topics(appointment_id, actor.user_id))
    if parsed is None or window is None or window.appointment_id != appointment_id:
        return None
    if not rt.screens.young(parsed, rt.wall()):
        return None
    await shared_pages_screen.fetch(rt, actor, appointment_id, parsed)
    cached = rt.screens.cache.entry(parsed.content)
    if cached is None:
        return None
    old, parts = cached
    shown = chat_append.shown(old, start_id=window.start_id, marker_id=window.marker_id)
    return ClientPage(parsed, window, shown, parts) if shown is not None else None


def _appended(
    rt: Runtime, actor: Actor, page: ClientPage, *, layout: Layout, sent: sending.Sent[Revision]
) -> UpdateSet | None:
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
    session: AsyncSession, thread: chat_sends.LockedThread, *, shown: chat_append.Shown, page_size: int
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
