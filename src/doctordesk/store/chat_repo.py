"""Chat queries: threads, keyset windows of messages, read positions and unread counts.

Messages are ordered by (created_at, id). Every page is a keyset query on the ``(thread_id, created_at, id)``
index with a row-value comparison, never OFFSET, so the cost of a page does not grow with the thread.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import BigInteger, Table, and_, bindparam, func, literal, or_, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.chat.messages import AttachmentView, Cursor, MessageView
from doctordesk.domain.files import attachments as attachment_rules
from doctordesk.domain.keyset import COUNT_CAP
from doctordesk.domain.roles import Role
from doctordesk.store import sqlite_inline
from doctordesk.store.chat_tables import Attachment, ChatMessage, ChatRead, ChatThread
from doctordesk.store.tables import User

# A window is everything from the client's oldest shown message on; this bounds it (a client that loaded more
# than this many older messages gets the newest ones only after a poll re-renders).
MAX_WINDOW = 5000


THREADS = cast(Table, ChatThread.__table__)
MESSAGES = cast(Table, ChatMessage.__table__)
ATTACHMENTS = cast(Table, Attachment.__table__)
USERS = cast(Table, User.__table__)

# Statements are built once, on the tables (plain SQL: no ORM entity loading), with these parameters: ``thread``,
# ``at`` and ``id`` (a position), ``n`` (how many).
_M = MESSAGES.c
_POSITION = tuple_(_M.created_at, _M.id)
_AT = tuple_(bindparam("at", type_=_M.created_at.type), bindparam("id", type_=_M.id.type))
_FROM = tuple_(bindparam("from_at", type_=_M.created_at.type), bindparam("from_id", type_=_M.id.type))
_NEWEST_FIRST = (_M.created_at.desc(), _M.id.desc())


def _messages() -> Any:
    m, u, a = _M, USERS.c, ATTACHMENTS.c
    return (
        select(m.id, m.sender_id, u.display_name, u.role, m.content, m.created_at, m.attachment_id)
        .add_columns(a.filename, a.mime, a.size)
        .join_from(MESSAGES, USERS, u.id == m.sender_id)
        .outerjoin(ATTACHMENTS, a.id == m.attachment_id)
    )


def _view(row: Any) -> MessageView:
    message_id, sender_id, name, role, content, at, attachment_id, filename, mime, size = row
    attachment = AttachmentView(attachment_id, filename, mime, size) if attachment_id is not None else None
    return MessageView(message_id, sender_id, name, Role(role), content, at, attachment)


def _at(position: Cursor) -> dict[str, Any]:
    return {"at": position.created_at, "id": position.id}


@functools.cache
def _statement(name: str) -> Any:
    m, t = _M, THREADS.c
    in_thread = m.thread_id == bindparam("thread")
    n = bindparam("n", type_=BigInteger())
    statements: dict[str, Any] = {
        "thread": lambda: select(t.id).where(t.appointment_id == bindparam("appointment")),
        "message": lambda: (
            _messages().add_columns(t.appointment_id).join(THREADS, t.id == m.thread_id).where(m.id == bindparam("id"))
        ),
        "cursor": lambda: select(m.created_at, m.id).where(m.id == bindparam("id"), in_thread),
        "latest": lambda: _messages().where(in_thread).order_by(*_NEWEST_FIRST).limit(n),
        "older": lambda: _messages().where(in_thread, _POSITION < _AT).order_by(*_NEWEST_FIRST).limit(n),
        "since": lambda: _messages().where(in_thread, _POSITION >= _AT).order_by(*_NEWEST_FIRST).limit(n),
        "after": lambda: _messages().where(in_thread, _POSITION > _AT).order_by(*_NEWEST_FIRST).limit(n),
        "count between": lambda: (
            select(func.count()).select_from(MESSAGES).where(in_thread, _POSITION >= _FROM, _POSITION <= _AT)
        ),
        "any older": lambda: select(m.id).where(in_thread, _POSITION < _AT).limit(1),
        "newest": lambda: select(m.created_at, m.id).where(in_thread).order_by(*_NEWEST_FIRST).limit(1),
    }
    return statements[name]()


async def thread_id_for(session: AsyncSession, appointment_id: int) -> int | None:
    found: int | None = await session.scalar(_statement("thread"), {"appointment": appointment_id})
    return found


async def message(session: AsyncSession, message_id: int) -> tuple[MessageView, int] | None:
    """One message and the appointment of its thread (None when unknown)."""
    row = (await session.execute(_statement("message"), {"id": message_id})).first()
    return (_view(row[:10]), int(row[10])) if row is not None else None


async def cursor_of(session: AsyncSession, thread_id: int, message_id: int) -> Cursor | None:
    """The position of a message of this thread (None when the id is not a message of the thread)."""
    row = (await session.execute(_statement("cursor"), {"id": message_id, "thread": thread_id})).first()
    return Cursor(row[0], row[1]) if row else None


async def _newest_first(session: AsyncSession, name: str, values: dict[str, Any]) -> list[MessageView]:
    return [_view(r) for r in await session.execute(_statement(name), values)]


async def latest(session: AsyncSession, thread_id: int, limit: int) -> tuple[list[MessageView], bool]:
    """The newest ``limit`` messages, oldest first, and whether older ones exist."""
    views = await _newest_first(session, "latest", {"thread": thread_id, "n": limit + 1})
    return list(reversed(views[:limit])), len(views) > limit


async def older(session: AsyncSession, thread_id: int, before: Cursor, limit: int) -> tuple[list[MessageView], bool]:
    """Up to ``limit`` messages just before ``before``, oldest first, and whether still older ones exist."""
    views = await _newest_first(session, "older", {"thread": thread_id, "n": limit + 1, **_at(before)})
    return list(reversed(views[:limit])), len(views) > limit


async def since(
    session: AsyncSession, thread_id: int, start: Cursor, *, limit: int = MAX_WINDOW
) -> tuple[list[MessageView], bool]:
    """Every message from ``start`` on (the client's window), oldest first, and whether older ones exist. A window
    longer than ``limit`` keeps its newest ``limit`` messages (the oldest shown then leave the client's page)."""
    views = await _newest_first(session, "since", {"thread": thread_id, "n": limit + 1, **_at(start)})
    if len(views) > limit:
        return list(reversed(views[:limit])), True
    has_older = await session.scalar(_statement("any older"), {"thread": thread_id, **_at(start)})
    return list(reversed(views)), has_older is not None


async def after(session: AsyncSession, thread_id: int, position: Cursor, limit: int) -> list[MessageView] | None:
    """The messages after ``position``, oldest first; None when there are more than ``limit``."""
    views = await _newest_first(session, "after", {"thread": thread_id, "n": limit + 1, **_at(position)})
    return list(reversed(views)) if len(views) <= limit else None


async def count_between(session: AsyncSession, thread_id: int, first: Cursor, last: Cursor) -> int:
    """How many messages stand from ``first`` to ``last`` (both included)."""
    values = {"thread": thread_id, "from_at": first.created_at, "from_id": first.id, **_at(last)}
    return int(await session.scalar(_statement("count between"), values) or 0)


async def newest(session: AsyncSession, thread_id: int) -> Cursor | None:
    row = (await session.execute(_statement("newest"), {"thread": thread_id})).first()
    return Cursor(row[0], row[1]) if row else None


@dataclass(frozen=True, slots=True)
class ReadPositions:
    by_user: dict[int, Cursor]
    support: Cursor | None  # the furthest any support agent has read

    def of(self, user_id: int) -> Cursor | None:
        return self.by_user.get(user_id)


async def read_positions(session: AsyncSession, thread_id: int) -> ReadPositions:
    rows = await session.execute(_read_positions_statement(), {"thread": thread_id})
    by_user: dict[int, Cursor] = {}
    support: Cursor | None = None
    for user_id, at, message_id, role in rows:
        position = Cursor(at, message_id)
        by_user[user_id] = position
        if role == Role.SUPPORT and (support is None or position.key() > support.key()):
            support = position
    return ReadPositions(by_user, support)


@functools.cache
def _read_positions_statement() -> Any:
    reads, users = cast(Table, ChatRead.__table__), cast(Table, User.__table__)
    r = reads.c
    return (
        select(r.user_id, r.message_created_at, r.message_id, users.c.role)
        .join_from(reads, users, users.c.id == r.user_id)
        .where(r.thread_id == bindparam("thread"))
    )


async def mark_read(session: AsyncSession, *, thread_id: int, user_id: int, up_to: Cursor, now: datetime) -> bool:
    """Move the reader's position forward to ``up_to`` (never back). True when it moved."""
    values = {"p_thread": thread_id, "p_user": user_id, "p_at": up_to.created_at, "p_id": up_to.id, "p_now": now}
    found = (await session.execute(_mark_read_statement(session.get_bind().dialect.name), values)).first()
    return found is not None


@functools.cache
def _mark_read_statement(dialect: str) -> Any:
    """One statement: insert the position, or move it forward; nothing comes back when it would move back. Built
    once per dialect (building it, with its ``excluded`` aliases, cost more than running it), on the table, so it
    runs as plain SQL (the ORM's bulk insert handling around it cost as much again)."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, ChatRead.__table__)
    c = table.c
    statement = insert(table).values(
        thread_id=bindparam("p_thread", type_=c.thread_id.type),
        user_id=bindparam("p_user", type_=c.user_id.type),
        message_created_at=bindparam("p_at", type_=c.message_created_at.type),
        message_id=bindparam("p_id", type_=c.message_id.type),
        updated_at=bindparam("p_now", type_=c.updated_at.type),
    )
    excluded = statement.excluded
    behind = or_(
        c.message_created_at < excluded.message_created_at,
        and_(c.message_created_at == excluded.message_created_at, c.message_id < excluded.message_id),
    )
    return statement.on_conflict_do_update(
        index_elements=[c.thread_id, c.user_id],
        set_={
            "message_created_at": excluded.message_created_at,
            "message_id": excluded.message_id,
            "updated_at": excluded.updated_at,
        },
        where=behind,
    ).returning(c.user_id)


async def unread_counts(session: AsyncSession, reader_id: int, appointment_ids: Sequence[int]) -> dict[int, int]:
    """Unread messages per appointment for one reader (messages of others after the reader's read position),
    each counted up to ``COUNT_CAP`` (shown as "99+" beyond), so a thread of 50,000 unread messages costs what one
    of 100 does. Threads whose newest message is the one the reader read last are not counted at all.

    One statement, built once: every list render reads it, and building and keying a UNION of a count per thread
    (as this was) cost more than running it."""
    if not appointment_ids:
        return {}
    rows = await sqlite_inline.planned_rows(session, _unread(), {"reader": reader_id, "ids": list(appointment_ids)})
    return {int(appointment_id): int(unread) for appointment_id, unread in rows if unread}


# Before every message: the read position of a reader who never read a thread.
_NEVER_READ = datetime(1970, 1, 1, tzinfo=UTC)


@functools.cache
def _unread() -> Any:
    """Per thread of the appointments ``ids`` whose newest message is not the one the reader read last: the
    appointment and its unread count, each count a correlated read along the thread's (thread, time, id) index from
    the reader's position (the start for a thread never read), up to ``COUNT_CAP`` rows."""
    threads_table, reads = cast(Table, ChatThread.__table__), cast(Table, ChatRead.__table__)
    threads, m = threads_table.c, cast(Table, ChatMessage.__table__).c
    read_at = func.coalesce(reads.c.message_created_at, literal(_NEVER_READ, type_=reads.c.message_created_at.type))
    read_id = func.coalesce(reads.c.message_id, 0)
    first = (
        select(m.id)
        .where(
            m.thread_id == threads.id,
            m.sender_id != bindparam("reader"),
            m.created_at >= read_at,
            or_(m.created_at > read_at, m.id > read_id),
        )
        .order_by(m.created_at, m.id)
        .limit(COUNT_CAP)
        .correlate(threads_table, reads)  # the outer row's thread and read position, through the derived table
        .subquery()
    )
    unread = select(func.count()).select_from(first).scalar_subquery()
    return (
        select(threads.appointment_id, unread)
        .outerjoin(reads, and_(reads.c.thread_id == threads.id, reads.c.user_id == bindparam("reader")))
        .where(
            threads.appointment_id.in_(bindparam("ids", expanding=True)),
            or_(
                reads.c.message_id.is_(None),
                threads.last_message_id.is_(None),
                threads.last_message_id != reads.c.message_id,
            ),
        )
    )


async def add_attachment(
    session: AsyncSession,
    *,
    uploader_id: int,
    filename: str | None,
    kind: attachment_rules.FileType,
    data: bytes,
    at: datetime,
) -> AttachmentView:
    """Store a file (its type already judged by its bytes) under a safe name; what a message shows of it."""
    file = Attachment(
        uploader_id=uploader_id,
        filename=attachment_rules.safe_filename(filename, kind),
        mime=kind.mime,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        data=data,
        created_at=at,
    )
    session.add(file)
    await session.flush()
    return AttachmentView(file.id, file.filename, file.mime, file.size)


async def attachment(session: AsyncSession, attachment_id: int) -> tuple[Attachment, int] | None:
    """The attachment and the appointment its message belongs to."""
    row = (
        await session.execute(
            select(Attachment, ChatThread.appointment_id)
            .join(ChatMessage, ChatMessage.attachment_id == Attachment.id)
            .join(ChatThread, ChatThread.id == ChatMessage.thread_id)
            .where(Attachment.id == attachment_id)
        )
    ).first()
    return (row[0], row[1]) if row else None
