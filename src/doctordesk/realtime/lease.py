"""What every durable outbox shares (push notifications, webhooks): leasing due rows, the retry delay, and the
dispatcher's loop.

Claiming takes a lease: the due rows get ``next_attempt_at = now + lease`` and one more attempt in the claiming
transaction (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so several workers never take the same row; SQLite
serialises writers anyway). A dispatcher that dies mid-delivery leaves its rows to come due again when the lease
ends; their ids are stable, so the receiver can drop the duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)


async def lease_due(
    session: AsyncSession,
    table: Any,
    *,
    now: datetime,
    limit: int,
    lease_seconds: float,
    skip_locked: bool,
    where: ColumnElement[bool] | None = None,
) -> list[int]:
    """Lease up to ``limit`` rows of ``table`` (a mapped class with ``id``, ``status``, ``next_attempt_at`` and
    ``attempts``) that are pending and due, optionally narrowed by ``where``; their ids, oldest due first."""
    query = (
        select(table.id)
        .where(table.status == "pending", table.next_attempt_at <= now)
        .order_by(table.next_attempt_at, table.id)
        .limit(limit)
    )
    if where is not None:
        query = query.where(where)
    if skip_locked:
        query = query.with_for_update(of=table, skip_locked=True)
    ids = list((await session.scalars(query)).all())
    if ids:
        await session.execute(
            update(table)
            .where(table.id.in_(ids))
            .values(next_attempt_at=now + timedelta(seconds=lease_seconds), attempts=table.attempts + 1)
        )
    return ids


def backoff(attempts: int, *, base: float, cap: float, asked: float | None) -> float:
    """Seconds before the next attempt: ``base`` · 2^(attempts-1) capped at ``cap``, ±20 % jitter (so failed
    rows of one outage do not all come back at once), or what the receiver asked for when that is longer."""
    delay = min(cap, base * 2 ** max(0, attempts - 1)) * (0.8 + 0.4 * random.random())
    return float(max(delay, asked or 0.0))


class DrainLoop:
    """A background task that runs ``round()`` until it finds nothing, then sleeps until woken or for
    ``poll_seconds``. Subclasses implement ``round`` and may override ``close``."""

    name = "outbox-dispatcher"

    def __init__(self, *, poll_seconds: float) -> None:
        self.poll_seconds = poll_seconds
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    def wake(self) -> None:
        """New rows were committed: look now instead of at the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name=self.name)

    async def stop(self, *, grace_seconds: float = 15.0) -> None:
        """Finish the work in hand (a round stops between sends), then close; cancel only after
        ``grace_seconds``. Cancelling at once could cut a database call in the middle, which some drivers do not
        survive cleanly."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), grace_seconds)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
            except Exception:  # the loop logs its own failures
                log.exception("%s ended with an error", self.name)
        await self.close()

    async def close(self) -> None:
        return None

    async def round(self) -> bool:
        """One claim–deliver–settle round; True when it found work (there may be more)."""
        raise NotImplementedError

    async def drain(self) -> None:
        """Rounds until nothing is due (the worker's ``--once``, tests)."""
        while await self.round():
            pass

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def run(self) -> None:
        while not self._stopping:
            # Cleared before the round, not after it: a wake-up that arrives while a round runs (a row committed
            # after the round's claim read) gets a round of its own at once instead of waiting for the next poll.
            self._wake.clear()
            try:
                busy = await self.round()
            except Exception:  # the database or the receiver hiccuped: try again shortly
                log.exception("%s round failed", self.name)
                busy = False
            if not busy:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_seconds):
                        await self._wake.wait()
