"""The statements of a chat send, each built once and run as plain SQL (no ORM flush, unit of work or entity
loading on the send's path: those were a large part of a send's server time, and every statement here runs while
the thread's row, and on SQLite the database, is locked)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.roles import Role
from doctordesk.store.chat_tables import ChatMessage, ChatThread
from doctordesk.store.tables import User

THREADS = cast(Table, ChatThread.__table__)
MESSAGES = cast(Table, ChatMessage.__table__)
USERS = cast(Table, User.__table__)


@dataclass(frozen=True, slots=True)
class LockedThread:
    id: int
    last_message_id: int | None  # the message written last before this send
    last_at: datetime | None  # its time
    created: bool = False  # by this send


@dataclass(frozen=True, slots=True)
class Inserted:
    id: int
    sender_name: str  # as stored now (a token's cached name may be older)
    sender_role: Role


async def lock_thread(session: AsyncSession, appointment_id: int, now: datetime) -> LockedThread:
    """The appointment's thread, created on the first message; its row is locked until commit (``FOR UPDATE``;
    SQLite's write lock does that there), so the sends of a thread are ordered."""
    row = (await session.execute(_lock(), {"appointment": appointment_id})).first()
    if row is not None:
        return LockedThread(row[0], row[1], row[2])
    created = (await session.execute(_create(), {"appointment": appointment_id, "now": now})).scalar_one()
    return LockedThread(created, None, None, created=True)


async def insert_message(
    session: AsyncSession,
    *,
    thread_id: int,
    sender_id: int,
    content: str,
    at: datetime,
    attachment_id: int | None,
    client_message_id: str | None,
) -> Inserted:
    """Store the message and move the thread's newest message and activity to it (two statements)."""
    values = {
        "thread": thread_id,
        "sender": sender_id,
        "content": content,
        "at": at,
        "attachment": attachment_id,
        "client_id": client_message_id,
    }
    message_id, name, role = (await session.execute(_insert(), values)).one()
    await session.execute(_touch(), {"thread": thread_id, "message": message_id, "at": at})
    return Inserted(message_id, name, Role(role))


async def existing(session: AsyncSession, sender_id: int, client_message_id: str) -> tuple[int, int] | None:
    """(message id, its appointment) stored by this sender under the client message id, if any."""
    row = (await session.execute(_existing(), {"sender": sender_id, "client_id": client_message_id})).first()
    return (row[0], row[1]) if row is not None else None


async def sent_since(session: AsyncSession, sender_id: int, since: datetime, limit: int) -> list[datetime]:
    """When the sender's newest messages after ``since`` were sent (at most ``limit``, newest first)."""
    rows = await session.execute(_recent(limit), {"sender": sender_id, "since": since})
    return [r[0] for r in rows]


async def agents_in_thread(session: AsyncSession, thread_id: int) -> Sequence[int]:
    """The support agents who have written in the thread."""
    return (await session.scalars(_agents_in_thread(), {"thread": thread_id, "role": Role.SUPPORT.value})).all()


async def active_agents(session: AsyncSession) -> Sequence[int]:
    return (await session.scalars(_active_agents(), {"role": Role.SUPPORT.value})).all()


# --- the statements ---------------------------------------------------------------------------------------------


@functools.cache
def _lock() -> Any:
    t, m = THREADS.c, MESSAGES.c
    return (
        select(t.id, t.last_message_id, m.created_at)
        .join_from(THREADS, MESSAGES, m.id == t.last_message_id, isouter=True)
        .where(t.appointment_id == bindparam("appointment"))
        .with_for_update(of=THREADS)
    )


@functools.cache
def _create() -> Any:
    t = THREADS.c
    at = bindparam("now", type_=t.created_at.type)
    return (
        insert(THREADS)
        .values(appointment_id=bindparam("appointment"), created_at=at, last_activity_at=at)
        .returning(t.id)
    )


@functools.cache
def _insert() -> Any:
    m, u = MESSAGES.c, USERS.c
    sender = bindparam("sender", type_=m.sender_id.type)
    return (
        insert(MESSAGES)
        .values(
            thread_id=bindparam("thread"),
            sender_id=sender,
            content=bindparam("content"),
            created_at=bindparam("at", type_=m.created_at.type),
            attachment_id=bindparam("attachment", type_=m.attachment_id.type),
            client_message_id=bindparam("client_id", type_=m.client_message_id.type),
        )
        .returning(
            m.id,
            select(u.display_name).where(u.id == sender).scalar_subquery(),
            select(u.role).where(u.id == sender).scalar_subquery(),
        )
    )


@functools.cache
def _touch() -> Any:
    t = THREADS.c
    return (
        update(THREADS)
        .where(t.id == bindparam("thread"))
        .values(last_activity_at=bindparam("at", type_=t.last_activity_at.type), last_message_id=bindparam("message"))
    )


@functools.cache
def _existing() -> Any:
    m, t = MESSAGES.c, THREADS.c
    return (
        select(m.id, t.appointment_id)
        .join_from(MESSAGES, THREADS, t.id == m.thread_id)
        .where(m.sender_id == bindparam("sender"), m.client_message_id == bindparam("client_id"))
    )


@functools.cache
def _recent(limit: int) -> Any:
    m = MESSAGES.c
    return (
        select(m.created_at)
        .where(m.sender_id == bindparam("sender"), m.created_at > bindparam("since", type_=m.created_at.type))
        .order_by(m.created_at.desc())
        .limit(limit)
    )


@functools.cache
def _agents_in_thread() -> Any:
    m, u = MESSAGES.c, USERS.c
    return (
        select(m.sender_id)
        .join_from(MESSAGES, USERS, u.id == m.sender_id)
        .where(m.thread_id == bindparam("thread"), u.role == bindparam("role"))
        .distinct()
    )


@functools.cache
def _active_agents() -> Any:
    u = USERS.c
    return select(u.id).where(u.role == bindparam("role"), u.active.is_(True))
