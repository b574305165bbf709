"""The chat screen: open the chat, load older or newer messages, close the chat (sending a message is
``services.chat.sending``; who may read a chat, its files and marking it read are ``services.chat.access``).

The chat's state token is the screen state token plus ``~{appointment}-{window start}-{marker}``: which thread,
the oldest message the client shows (its window grows as older pages are loaded and new messages arrive) and where
the "new messages" marker stood when the chat was opened. The token is not a credential: every call checks the
caller's access to the appointment again. Real-time messages can name the poll endpoint without a query, so the
token is how ``PATCH /profile/messages/load-more`` knows the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.chat.messages import (
    Cursor,
    MessageView,
    first_unread,
    is_unread,
    may_write,
)
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.inputs import parse_id, parse_int
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens.chat import append as chat_append
from doctordesk.screens.chat import screen
from doctordesk.screens.hashing import parts_of
from doctordesk.screens.protocol import Layout, Page, UpdateSet, apply, diff, p_prepend, p_remove, p_reset
from doctordesk.screens.state import Render, Token, Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.chat import access, shared_pages_screen
from doctordesk.store import chat_repo

READ_EVENT = EventKind.CHAT_READ


# --- the chat's state token -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Window:
    appointment_id: int
    start_id: int | None = None
    marker_id: int | None = None

    def encode(self) -> str:
        return f"{self.appointment_id}-{self.start_id or 0}-{self.marker_id or 0}"


def split_state(token: str | None) -> tuple[str | None, Window | None]:
    """The screen state token and the chat window it carries (None for anything malformed)."""
    if not token:
        return None, None
    inner, sep, suffix = token.rpartition("~")
    if not sep:
        return token, None
    parts = suffix.split("-")
    if len(parts) != 3:
        return inner, None
    appointment_id, start_id, marker_id = (
        parse_id(parts[0]),
        parse_int(parts[1], minimum=0),
        parse_int(parts[2], minimum=0),
    )
    if appointment_id is None or start_id is None or marker_id is None:
        return inner, None
    return inner, Window(appointment_id, start_id or None, marker_id or None)


def join_state(inner: str, window: Window) -> str:
    return f"{inner}~{window.encode()}"


# --- reading ----------------------------------------------------------------------------------------------------


@dataclass
class _Rendered:
    """What a render saw, for the work that follows it (the new window, marking read)."""

    window: Window | None = None
    thread_id: int | None = None
    newest_incoming: Cursor | None = None


async def _state(
    rt: Runtime,
    session: AsyncSession,
    actor: Actor,
    appointment: AppointmentView,
    window: Window | None,
    *,
    before: int | None = None,
) -> tuple[screen.ChatState, _Rendered]:
    page_size = rt.settings.chat_page_size
    thread_id = await chat_repo.thread_id_for(session, appointment.id)
    messages: list[MessageView] = []
    has_older = False
    positions = chat_repo.ReadPositions({}, None)
    if thread_id is not None:
        if before is not None:
            anchor = await chat_repo.cursor_of(session, thread_id, before)
            if anchor is None:
                raise ValidationFailed(fields={"before": N_("Not a message of this chat.")})
            earlier, has_older = await chat_repo.older(session, thread_id, anchor, page_size)
            rest, _ = await chat_repo.since(session, thread_id, anchor)
            messages = earlier + rest
        else:
            start = None
            if window is not None and window.start_id is not None:
                start = await chat_repo.cursor_of(session, thread_id, window.start_id)
            if start is not None:
                messages, has_older = await chat_repo.since(session, thread_id, start)
            else:
                messages, has_older = await chat_repo.latest(session, thread_id, page_size)
        positions = await chat_repo.read_positions(session, thread_id)
    viewer_read = positions.of(actor.user_id)
    if window is not None:
        marker_id = window.marker_id
    else:
        marker_id = first_unread(messages, reader_id=actor.user_id, read_up_to=viewer_read)
    state = _chat_state(rt, actor, appointment, positions, messages, has_older=has_older, marker_id=marker_id)
    incoming = [m for m in messages if is_unread(m, reader_id=actor.user_id, read_up_to=viewer_read)]
    rendered = _Rendered(
        window=Window(appointment.id, messages[0].id if messages else None, marker_id),
        thread_id=thread_id,
        newest_incoming=incoming[-1].cursor if incoming else None,
    )
    return state, rendered


class _ChatRender:
    """Renders an appointment's chat (``window``: the client's, ``before``: older than this message) and keeps
    what the last render showed, which the state token and the read position need."""

    def __init__(
        self,
        rt: Runtime,
        actor: Actor,
        appointment_id: int,
        layout: Layout,
        window: Window | None = None,
        before: int | None = None,
    ) -> None:
        self.rt, self.actor, self.appointment_id, self.layout = rt, actor, appointment_id, layout
        self.window, self.before = window, before
        self.rendered = _Rendered()

    async def __call__(self) -> Page:
        async with self.rt.db.read(screen=True) as session:
            appointment = await access.chat_appointment(session, self.actor, self.appointment_id)
            state, self.rendered = await _state(
                self.rt, session, self.actor, appointment, self.window, before=self.before
            )
        # Nothing on it changes with time alone: messages and the appointment are shown as moments.
        return lasting(screen.render(state, layout=self.layout, timeout=self.rt.settings.poll_chat_seconds), None)


def _chat_state(
    rt: Runtime,
    actor: Actor,
    appointment: AppointmentView,
    positions: chat_repo.ReadPositions,
    messages: Sequence[MessageView],
    *,
    has_older: bool,
    marker_id: int | None,
) -> screen.ChatState:
    """What the Chat page shows ``actor``: these messages, the read positions, and what the viewer may write."""
    return screen.ChatState(
        appointment=appointment,
        viewer=actor,
        messages=tuple(messages),
        has_older=has_older,
        marker_id=marker_id,
        viewer_read=positions.of(actor.user_id),
        doctor_read=positions.of(appointment.doctor.id),
        support_read=positions.support,
        can_write=may_write(actor, doctor_id=appointment.doctor.id),
        max_chars=rt.settings.max_message_chars,
        max_upload_bytes=rt.settings.max_upload_bytes,
    )


def _viewing(rt: Runtime, actor: Actor, appointment_id: int, render: Render, client_id: str | None) -> Viewing:
    shown = screen.shown(appointment_id, actor.user_id)
    return Viewing(
        rt.screens,
        rt.wall(),
        Viewer.of(actor, client_id),
        shown,
        rt.settings.poll_chat_seconds,
        render,
    )


async def open_chat(
    rt: Runtime, actor: Actor, appointment_id: int, *, layout: Layout, client_id: str | None = None
) -> Page:
    """The Chat page for an appointment: the latest page of messages, the marker before the first unread one."""
    render = _ChatRender(rt, actor, appointment_id, layout)
    page = await _viewing(rt, actor, appointment_id, render, client_id).page()
    assert render.rendered.window is not None
    await shared_pages_screen.keep(rt, actor, appointment_id, Token.parse(page.state))
    page.state = join_state(page.state, render.rendered.window)
    return page


async def load_more(
    rt: Runtime,
    actor: Actor,
    token: str | None,
    *,
    layout: Layout,
    appointment_id: int | None = None,
    before: int | None = None,
    fresh: bool = False,
    client_id: str | None = None,
) -> UpdateSet:
    """PATCH /profile/messages/load-more: with ``before`` the older messages (prepended to the thread); without it
    the chat's poll, bringing newer messages and read flags (and marking what it delivers as read: the reader is
    looking at the thread). ``fresh``: render even when nothing changed (the answer to a send)."""
    inner, window = split_state(token)
    if appointment_id is None:
        if window is None:
            raise ValidationFailed(fields={"appointment-id": N_("Required (or the chat's state token).")})
        appointment_id = window.appointment_id
    if window is not None and window.appointment_id != appointment_id:
        inner, window = None, None  # the client's page is another chat: answer with a reset
    render = _ChatRender(rt, actor, appointment_id, layout, window, before)
    chat = _viewing(rt, actor, appointment_id, render, client_id)
    if before is not None:
        page = await rt.screens.page(chat.shown.topics, chat.now, render, viewer=chat.viewer)
        cached = rt.screens.cached(inner, chat.viewer, chat.shown.topics)
        update = UpdateSet(screen.SCREEN, page.state, chat.timeout, _older_patches(cached[0] if cached else None, page))
    elif fresh or window is None:  # without a window the answer must render, to name one
        update = await chat.refresh(inner)
    elif not rt.screens.unchanged(inner, chat.shown.topics, chat.now, viewer=chat.viewer) and (
        appended := await _appended(rt, actor, chat, inner, window, layout)
    ):
        update, render.rendered = appended
    else:
        update = await chat.poll(inner)
    rendered = render.rendered
    if rendered.window is None:  # unchanged: the poll did not render
        assert window is not None
        update.state = join_state(update.state, window)
        return update
    if before is None:
        await _mark_viewed(rt, actor, appointment_id, rendered)
    await shared_pages_screen.keep(rt, actor, appointment_id, Token.parse(update.state))
    update.state = join_state(update.state, rendered.window)
    return update


async def _appended(
    rt: Runtime, actor: Actor, chat: Viewing, inner: str | None, window: Window, layout: Layout
) -> tuple[UpdateSet, _Rendered] | None:
    """A changed poll answered as a send is (docs/chat.md, "The answer to a send"): the client's cached page with
    what was written since appended and the read flags brought up to date, without rendering the window again;
    None when that does not give what a render gives (the caller renders)."""
    states, topics = rt.screens, chat.shown.topics
    parsed = states.read(inner, chat.viewer, topics)
    if parsed is None or not states.young(parsed, chat.now):
        return None
    await shared_pages_screen.fetch(rt, actor, window.appointment_id, parsed)  # made by another process on the bus
    entry = states.cache.entry(parsed.content)
    if entry is None:
        return None
    old, parts = entry
    shown = chat_append.shown(old, start_id=window.start_id, marker_id=window.marker_id)
    if shown is None or shown.first is None or shown.newest is None:
        return None
    revision = states.revision(topics)  # before anything the answer shows is read
    async with rt.db.read(screen=True) as session:
        appointment = await access.chat_appointment(session, actor, window.appointment_id)
        thread_id = await chat_repo.thread_id_for(session, appointment.id)
        if thread_id is None or await chat_repo.count_between(session, thread_id, shown.first, shown.newest) != len(
            shown.ids
        ):
            return None  # a message landed inside the window: a render shows it
        newer = await chat_repo.after(session, thread_id, shown.newest, chat_repo.MAX_WINDOW)
        positions = await chat_repo.read_positions(session, thread_id)
    if newer is None:
        return None
    viewer_read = positions.of(actor.user_id)
    state = _chat_state(rt, actor, appointment, positions, newer, has_older=False, marker_id=window.marker_id)
    appended = chat_append.append(shown, state, layout=layout, timeout=chat.timeout, max_messages=chat_repo.MAX_WINDOW)
    if appended is None:
        return None
    token = states.follow(
        parsed, viewer=chat.viewer, topics=topics, revision=revision, screen=screen.SCREEN, title=appended.title,
        poll=screen.LOAD_MORE_ENDPOINT, elements=appended.elements, parts=parts_of(appended.messages, parts),
    )  # fmt: skip
    incoming = [m.cursor for m in newer if is_unread(m, reader_id=actor.user_id, read_up_to=viewer_read)]
    newest = incoming[-1] if incoming else chat_append.newest_unread_incoming(shown, viewer_read)
    rendered = _Rendered(window=window, thread_id=thread_id, newest_incoming=newest)
    return UpdateSet(screen.SCREEN, token, chat.timeout, appended.patches), rendered


def _children(elements: list[dict[str, Any]], element_id: str) -> list[dict[str, Any]]:
    for e in elements:
        if e["id"] == element_id:
            children: list[dict[str, Any]] = e.get("children", [])
            return children
        found = _children(e.get("children", []), element_id)
        if found:
            return found
    return []


def _older_patches(old: list[dict[str, Any]] | None, page: Page) -> list[dict[str, Any]]:
    """Older messages as one prepend to the thread container (clients keep the scroll position on prepend),
    then whatever else changed, so the result is exactly the fresh page."""
    new = page.elements_json()
    if old is None:
        return [p_reset(new)]
    old_ids = {e["id"] for e in _children(old, screen.CONTAINER) if e["id"] != "load-more"}
    new_children = _children(new, screen.CONTAINER)
    prefix = []
    for e in new_children:
        if e["id"] in old_ids:
            break
        prefix.append(e)
    patches = []
    if any(e["id"] == "load-more" for e in _children(old, screen.CONTAINER)):
        patches.append(p_remove("load-more"))
    if prefix:
        patches.append(p_prepend(prefix, parent=screen.CONTAINER))
    return patches + diff(apply(old, patches), new)


async def _mark_viewed(rt: Runtime, actor: Actor, appointment_id: int, rendered: _Rendered) -> None:
    if rendered.thread_id is None or rendered.newest_incoming is None:
        return
    await access.read_up_to(rt, actor, appointment_id, rendered.thread_id, rendered.newest_incoming)


# --- closing ----------------------------------------------------------------------------------------------------


async def close_chat(rt: Runtime, actor: Actor, appointment_id: int) -> UpdateSet:
    """Closing the chat marks the thread read for this reader; the client goes back to its list."""
    await access.read_all(rt, actor, appointment_id)
    back = "/profile/messages/threads" if actor.role is Role.SUPPORT else "/profile/appointments"
    return UpdateSet(screen=screen.SCREEN, state="", timeout=rt.settings.poll_chat_seconds, navigate=back)
