"""Events of processes without the bus (the bulk import), published by a serving process.

A process that changes the clinic's data but does not serve (``doctordesk import``) cannot reach the serving
processes' bus: the in-process bus lives in the server, and even with Redis an offline command should not depend on
it. It *stages* its events in the database, in the transaction of its change (``stage``); every serving process looks
for staged events every ``DOCTORDESK_RELAY_SECONDS`` (one read of an empty table while there are none) and publishes
what it claims on its bus (``relay_staged``), as if the change had been made through it: open screens on those topics
render again at their next poll and clients on them get their real-time message.

Claiming deletes the rows in the transaction that publishes them, so several processes never publish one row twice
(a second process's delete finds the rows gone); a publish that fails rolls the claim back, and the events wait for
the next round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from sqlalchemy import Row, delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.event_kinds import BadEvent, checked_kind
from doctordesk.domain.events import DomainEvent
from doctordesk.store.db import Database
from doctordesk.store.realtime_tables import RelayedEvent

log = logging.getLogger(__name__)
BATCH = 100  # staged events claimed per round

Publish = Callable[[Sequence[DomainEvent]], Awaitable[None]]


async def stage(session: AsyncSession, events: Sequence[DomainEvent], *, now: datetime) -> None:
    """Keep ``events`` for a serving process to publish (in ``session``'s transaction: only if it commits). Only
    the kind and the topics travel: what routing and the screens' change marks use."""
    rows = [{"kind": e.kind.value, "topics": "\n".join(e.topics), "created_at": now} for e in events if e.topics]
    if rows:
        await session.execute(insert(RelayedEvent), rows)


async def relay_staged(db: Database, publish: Publish) -> int:
    """Publish the staged events this process claims (at most ``BATCH``, oldest first); the number published."""
    async with db.read() as session:
        if await session.scalar(select(RelayedEvent.id).limit(1)) is None:
            return 0
    async with db.transaction() as session:
        oldest = select(RelayedEvent.id).order_by(RelayedEvent.id).limit(BATCH).scalar_subquery()
        claimed = await session.execute(
            delete(RelayedEvent)
            .where(RelayedEvent.id.in_(oldest))
            .returning(RelayedEvent.id, RelayedEvent.kind, RelayedEvent.topics)
        )
        rows = sorted(claimed.all(), key=lambda row: row[0])
        events = _events(rows)
        # Published before the claim commits: a failed publish leaves the rows for the next round. The change
        # itself committed long before (in the staging process), so no client can read ahead of it.
        await publish(events)
    return len(rows)


def _events(rows: Sequence[Row[int, str, str]]) -> list[DomainEvent]:
    """The claimed rows as events; a row of a kind this process does not know is left out and logged (it is
    claimed all the same: it would not be known at the next round either)."""
    events: list[DomainEvent] = []
    for _id, raw, topics in rows:
        try:
            events.append(DomainEvent(checked_kind(raw), tuple(topics.split("\n"))))
        except BadEvent as exc:
            log.warning("relay: refused staged event %s: %s", _id, exc)
    return events


async def run(db: Database, publish: Publish, *, every: float, stopping: asyncio.Event) -> None:
    """Relay staged events every ``every`` seconds until ``stopping`` (0: none, another process relays them)."""
    while every and not stopping.is_set():
        try:
            while await relay_staged(db, publish) == BATCH:
                pass
        except Exception:  # a database or bus outage: try again next round
            log.exception("relaying staged events failed")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(every):
                await stopping.wait()
