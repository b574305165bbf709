"""The support agents' thread list screen: the most recently active threads first, paged with "show more" through a
keyset window in the state token (``screens/windows.py``), with one grouped query for the viewer's unread counts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.errors import Forbidden
from doctordesk.domain.keyset import COUNT_CAP, Position, Slice
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens.chat import threads as threads_screen
from doctordesk.screens.chat.threads import ThreadSummary
from doctordesk.screens.protocol import Layout, Page
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.windows import Windows
from doctordesk.services import show_more_screen
from doctordesk.services.show_more_screen import Bound, Take
from doctordesk.store import chat_repo, keyset
from doctordesk.store.chat_tables import ChatMessage, ChatThread
from doctordesk.store.tables import Appointment, Location, Patient, User

KEYS = (threads_screen.SECTION,)

_Doctor = aliased(User)
_Sender = aliased(User)


def require_thread_list_role(actor: Actor) -> None:
    """Support agents (and admins) see every thread; doctors find theirs on the appointment list."""
    if actor.role not in (Role.SUPPORT, Role.ADMIN):
        raise Forbidden(N_("The thread list is for support agents."))


def position_of(thread: ThreadSummary) -> Position:
    return Position(thread.last_activity_at, thread.thread_id)


def _summary(r: Any) -> ThreadSummary:
    return ThreadSummary(
        thread_id=r[0],
        appointment_id=r[1],
        last_activity_at=r[2],
        appointment_start=r[3],
        chat_enabled=r[4],
        doctor_name=r[5],
        patient_name=r[6],
        timezone=r[7],
        latest_content=r[8],
        latest_has_file=r[9] is not None,
        latest_sender=r[10],
        unread=0,
    )


def _take(session: AsyncSession) -> Take[ThreadSummary]:
    at, thread_id = ChatThread.last_activity_at, ChatThread.id

    async def take(bound: Bound | None, limit: int) -> list[ThreadSummary]:
        query = (
            select(
                ChatThread.id,
                ChatThread.appointment_id,
                ChatThread.last_activity_at,
                Appointment.start_at,
                Appointment.chat_enabled,
                _Doctor.display_name,
                Patient.name,
                Location.timezone,
                ChatMessage.content,
                ChatMessage.attachment_id,
                _Sender.display_name,
            )
            .join(Appointment, Appointment.id == ChatThread.appointment_id)
            .join(_Doctor, _Doctor.id == Appointment.doctor_id)
            .join(Patient, Patient.id == Appointment.patient_id)
            .join(Location, Location.id == Appointment.location_id)
            .outerjoin(ChatMessage, ChatMessage.id == ChatThread.last_message_id)
            .outerjoin(_Sender, _Sender.id == ChatMessage.sender_id)
        )
        if bound is not None:
            edge = keyset.through if bound.through else keyset.beyond
            query = query.where(edge(at, thread_id, bound.position, descending=True))
        rows = await session.execute(query.order_by(*keyset.ordered(at, thread_id, descending=True)).limit(limit))
        return [_summary(r) for r in rows]

    return take


async def list_threads(
    session: AsyncSession, actor: Actor, *, window: Position | None = None, size: int
) -> Slice[ThreadSummary]:
    """The threads the viewer is shown (the first ``size``, or all through ``window``), with their unread counts."""
    require_thread_list_role(actor)
    shown = await show_more_screen.read_section(_take(session), position_of, window=window, size=size)
    if shown.more:
        capped = select(ChatThread.id).limit(COUNT_CAP).subquery()
        shown = replace(shown, total=await session.scalar(select(func.count()).select_from(capped)))
    unread = await chat_repo.unread_counts(session, actor.user_id, [t.appointment_id for t in shown.rows])
    return replace(shown, rows=[replace(t, unread=unread.get(t.appointment_id, 0)) for t in shown.rows])


def _viewing(rt: Runtime, actor: Actor, windows: Windows, *, layout: Layout, client_id: str | None) -> Viewing:
    require_thread_list_role(actor)
    timeout, size = rt.settings.poll_list_seconds, rt.settings.list_page_size
    window = windows.get(threads_screen.SECTION)

    async def render() -> Page:
        async with rt.db.read() as session:
            threads = await list_threads(session, actor, window=window, size=size)
        # Nothing on it changes with time alone: the last activity and the appointments are shown as moments.
        return lasting(threads_screen.render(threads, layout=layout, timeout=timeout), None)

    shown = threads_screen.shown(actor.user_id)
    # What the render reads besides the topics and the clock: an agent's tabs polling the same change share one
    # render (docs/protocol.md#changed-polls-one-render-per-viewer-and-revision).
    shares = (threads_screen.SCREEN, replace(actor, token_id=None), layout, window, timeout, size)
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, timeout, render, shares)


def screen(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> show_more_screen.PagedScreen:
    """The thread list as ``actor`` sees it: its page, its poll and its "show more" (support agents and admins;
    others get 403)."""
    require_thread_list_role(actor)

    async def next_window(windows: Windows, section: str) -> Position | None:
        async with rt.db.read() as session:
            return await show_more_screen.next_window(
                _take(session), position_of, window=windows.get(section), size=rt.settings.list_page_size
            )

    return show_more_screen.PagedScreen(
        KEYS, lambda windows: _viewing(rt, actor, windows, layout=layout, client_id=client_id), next_window
    )
