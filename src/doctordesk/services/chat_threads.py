"""The support agents' thread list screen: one query for the threads, one grouped query for the viewer's unread
counts."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.errors import Forbidden
from doctordesk.domain.roles import Actor, Role
from doctordesk.runtime import Runtime
from doctordesk.screens import chat_threads as threads_screen
from doctordesk.screens.chat_threads import ThreadSummary
from doctordesk.screens.protocol import Layout, Page
from doctordesk.screens.state import Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.store import chat_repo
from doctordesk.store.chat_tables import ChatMessage, ChatThread
from doctordesk.store.tables import Appointment, Location, Patient, User

MAX_THREADS = 200

_Doctor = aliased(User)
_Sender = aliased(User)


def require_thread_list_role(actor: Actor) -> None:
    """Support agents (and admins) see every thread; doctors find theirs on the appointment list."""
    if actor.role not in (Role.SUPPORT, Role.ADMIN):
        raise Forbidden("The thread list is for support agents.")


async def list_threads(session: AsyncSession, actor: Actor, *, limit: int = MAX_THREADS) -> list[ThreadSummary]:
    """The most recently active threads first, with the viewer's unread counts and each latest message."""
    require_thread_list_role(actor)
    rows = (
        await session.execute(
            select(
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
            .order_by(ChatThread.last_activity_at.desc(), ChatThread.id.desc())
            .limit(limit)
        )
    ).all()
    unread = await chat_repo.unread_counts(session, actor.user_id, [r[0] for r in rows])
    return [
        ThreadSummary(
            appointment_id=r[0],
            doctor_name=r[4],
            patient_name=r[5],
            appointment_start=r[2],
            timezone=r[6],
            last_activity_at=r[1],
            latest_sender=r[9],
            latest_content=r[7],
            latest_has_file=r[8] is not None,
            unread=unread.get(r[0], 0),
            chat_enabled=r[3],
        )
        for r in rows
    ]


def viewing(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    """The thread list, as ``actor`` sees it: ``page()`` for the PUT, ``poll()`` for the PATCH (support agents and
    admins; others get 403)."""
    require_thread_list_role(actor)
    timeout = rt.settings.poll_list_seconds

    async def render() -> Page:
        async with rt.db.read() as session:
            threads = await list_threads(session, actor)
        return threads_screen.render(threads, layout=layout, timeout=timeout)

    shown = threads_screen.shown(actor.user_id)
    return Viewing(rt.screens, rt.wall(), Viewer(client_id, actor.user_id), shown, timeout, render)
