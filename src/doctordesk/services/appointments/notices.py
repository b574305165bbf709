"""In-app notices (``domain/appointments/notices.py``): left in the transaction of the change they tell about, read by
the appointment list, dismissed by their owner.

A notice is written in one person's request and read in another's: it is stored as its text's template and values
(``domain/texts.py``) beside the English, and read back as a ``Text`` that the list shows in the reader's
language. Rows from before the template was stored are read as their English."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.notices import SHOWN, Notice
from doctordesk.domain.errors import NotFound
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, from_json, to_json
from doctordesk.runtime import Runtime
from doctordesk.services.uow import unit_of_work
from doctordesk.store import sqlite_inline
from doctordesk.store.notice_tables import UserNotice
from doctordesk.store.tables import Appointment, Location


def leave(
    session: AsyncSession, user_ids: Iterable[int], *, appointment_id: int | None, text: str, now: datetime
) -> None:
    """A notice for each of ``user_ids``, written with the change it tells about (and the appointment it is about,
    if any: a waitlist offer's is about none)."""
    for user_id in dict.fromkeys(user_ids):
        session.add(
            UserNotice(
                user_id=user_id, appointment_id=appointment_id, text=text[:500], message=to_json(text), created_at=now
            )
        )


async def open_notices(session: AsyncSession, user_id: int) -> list[Notice]:
    """The user's newest undismissed notices (at most ``SHOWN``)."""
    rows = await sqlite_inline.planned_rows(session, _open_notices(), {"user": user_id})
    return [Notice(notice_id, from_json(message) or text, created_at, appointment_id, start_at, timezone)
            for notice_id, message, text, created_at, appointment_id, start_at, timezone in rows]  # fmt: skip


@functools.cache
def _open_notices() -> Any:
    """``open_notices``'s statement, built once (every list render reads it) with the user as a parameter."""
    notices = cast(Table, UserNotice.__table__)
    appointments, locations = cast(Table, Appointment.__table__), cast(Table, Location.__table__)
    n = notices.c
    return (
        select(n.id, n.message, n.text, n.created_at, n.appointment_id, appointments.c.start_at, locations.c.timezone)
        .outerjoin(appointments, appointments.c.id == n.appointment_id)
        .outerjoin(locations, locations.c.id == appointments.c.location_id)
        .where(n.user_id == bindparam("user"), n.dismissed_at.is_(None))
        .order_by(n.id.desc())
        .limit(SHOWN)
    )


async def dismiss(rt: Runtime, actor: Actor, notice_id: int | None) -> None:
    """Dismiss one of the actor's notices (``notice_id``), or all of them (None). Another user's notice is 404; a
    notice already dismissed stays dismissed. The actor's other screens learn it through their user topic."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        where = [UserNotice.user_id == actor.user_id, UserNotice.dismissed_at.is_(None)]
        if notice_id is not None:
            owner = await uow.session.scalar(select(UserNotice.user_id).where(UserNotice.id == notice_id))
            if owner != actor.user_id:
                raise NotFound(N_("Notice not found."))
            where.append(UserNotice.id == notice_id)
        await uow.session.execute(update(UserNotice).where(*where).values(dismissed_at=now))
        uow.emit(DomainEvent(kind=EventKind.NOTICE_DISMISSED, topics=(user_topic(actor.user_id),), data={}))
