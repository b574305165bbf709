"""Recording webhook outcomes: each attempt's retry schedule, the outcomes collected as they come (``Recorder``)
and recorded together in one transaction: attempts settled, unused leases given back, and endpoints that answered
410 or failed too long stopped (an admin's webhook disabled, a FHIR Subscription put into ``error``)."""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.texts import Text
from doctordesk.realtime.lease import backoff
from doctordesk.services.fhir import subscriptions as fhir_subscriptions
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.services.webhooks.endpoints import disable_and_tell_admins
from doctordesk.services.webhooks.outbox import Attempt, Due, GivenBack
from doctordesk.store.db import Database
from doctordesk.store.webhook_tables import WebhookEndpoint
from doctordesk.workers.webhook_sending import Outcome

log = logging.getLogger("doctordesk.workers.webhook_dispatcher")

GONE_REASON = Text("The endpoint answered 410 Gone.")
FLUSH_SECONDS = 0.02  # outcomes are recorded this long after the first of them, together


class Settle(Protocol):
    """Records attempts, gives back leases and stops endpoints in one transaction (``settle``); the endpoints
    stopped."""

    def __call__(
        self, attempts: Sequence[Attempt], *, gone: Collection[int], now: datetime, given_back: Sequence[GivenBack]
    ) -> Awaitable[set[int]]: ...


def attempt(due: Due, outcome: Outcome, *, settings: Settings, now: datetime) -> Attempt:
    """What an attempt comes to: delivered, given up (410, or the last attempt), or due again after a backoff
    that is at least what the endpoint asked for."""
    code, error, asked = outcome
    s = settings
    if error is None:
        return Attempt(due.id, due.endpoint_id, due.attempts, ok=True, status_code=code)
    if code == 410 or due.attempts >= s.webhook_max_attempts:
        reason = GONE_REASON if code == 410 else f"gave up after {due.attempts} attempts: {error}"
        return Attempt(due.id, due.endpoint_id, due.attempts, ok=False, status_code=code, error=reason)
    delay = backoff(
        due.attempts,
        base=s.webhook_backoff_seconds,
        cap=s.webhook_backoff_max_seconds,
        asked=min(asked, s.webhook_backoff_max_seconds) if asked is not None else None,
    )
    return Attempt(
        due.id,
        due.endpoint_id,
        due.attempts,
        ok=False,
        status_code=code,
        error=error,
        retry_at=now + timedelta(seconds=delay),
    )


class Recorder:
    """A dispatcher's outcomes, collected as its attempts end and recorded together: by ``flush()`` (a round's
    end), or by ``run()`` ``FLUSH_SECONDS`` after the first of them arrived. Also the retries due before the next
    poll, for the claimer to wake for."""

    def __init__(
        self,
        *,
        settings: Settings,
        clock: Clock,
        name: str,
        poll_seconds: float,
        settle: Settle,
        stopped: Callable[[int], None],
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.name = name
        self.poll_seconds = poll_seconds
        self._settle = settle
        self._stopped = stopped  # told each endpoint the recording stopped
        self._attempts: list[Attempt] = []
        self._given_back: list[GivenBack] = []
        self._gone: set[int] = set()
        self._recorded = asyncio.Event()
        self._flushing = asyncio.Lock()
        self._retries: list[datetime] = []  # retries due before the next poll (a heap): the claimer wakes for them
        self.closing = False  # the loop ends: record what is left, then end

    def give_back(self, due: Due, at: datetime, note: str | None) -> None:
        self._given_back.append(GivenBack(due.id, due.attempts, at, note))
        self._recorded.set()

    def record(self, due: Due, outcome: Outcome) -> None:
        self._recorded.set()
        code = outcome[0]
        result = attempt(due, outcome, settings=self.settings, now=self.clock.now())
        self._attempts.append(result)
        if code == 410:
            self._gone.add(due.endpoint_id)
        if result.retry_at is not None and result.retry_at < self.clock.now() + timedelta(seconds=self.poll_seconds):
            heapq.heappush(self._retries, result.retry_at)

    def next_retry(self, *, after: datetime) -> datetime | None:
        """The first retry scheduled here that came due after ``after`` (those due before are forgotten)."""
        while self._retries and self._retries[0] <= after:
            heapq.heappop(self._retries)
        return self._retries[0] if self._retries else None

    def close(self) -> None:
        """``run()`` records what is left and ends."""
        self.closing = True
        self._recorded.set()

    async def run(self) -> None:
        """Record the outcomes ``FLUSH_SECONDS`` after the first of them arrived, together; once closing, what is
        left, and end."""
        while True:
            await self._recorded.wait()
            if not self.closing:
                await asyncio.sleep(FLUSH_SECONDS)
            self._recorded.clear()
            try:
                await self.flush()
            except Exception:  # kept for the next try; the leases hold the rows meanwhile
                log.exception("%s: recording outcomes failed", self.name)
                if self.closing:
                    return  # the leases run out and the deliveries go out again
                await asyncio.sleep(min(1.0, self.poll_seconds))
                self._recorded.set()
                continue
            if self.closing and not (self._attempts or self._given_back):
                return
            if self.closing:  # outcomes came in while that flush ran: record them too before ending
                self._recorded.set()

    async def flush(self) -> None:
        """Record every outcome collected so far in one transaction."""
        async with self._flushing:
            attempts, given_back, gone = self._attempts, self._given_back, self._gone
            if not attempts and not given_back:
                return
            self._attempts, self._given_back, self._gone = [], [], set()
            try:
                stopped = await self._settle(attempts, gone=gone, now=self.clock.now(), given_back=given_back)
            except BaseException:
                self._attempts[:0], self._given_back[:0] = attempts, given_back
                self._gone |= gone
                raise
        for endpoint_id in stopped:
            self._stopped(endpoint_id)


async def settle(
    db: Database,
    settings: Settings,
    attempts: Sequence[Attempt],
    *,
    gone: Collection[int],
    now: datetime,
    given_back: Sequence[GivenBack],
) -> set[int]:
    """Record outcomes, give back unused leases, and stop endpoints that answered 410 or failed too long. The
    endpoints stopped."""
    succeeded = {a.endpoint_id for a in attempts if a.ok}
    failing = {a.endpoint_id for a in attempts if not a.ok} - succeeded - set(gone)
    limit = now - timedelta(seconds=settings.webhook_disable_after_seconds)
    stopped: set[int] = set()
    async with db.transaction() as session:
        await webhook_outbox.settle(session, attempts, now=now)
        if given_back:
            await webhook_outbox.give_back(session, given_back)
        if gone:
            await _stop(session, sorted(gone), now=now, reason=GONE_REASON)
            stopped |= set(gone)
        if failing:
            too_long = (
                await session.scalars(
                    select(WebhookEndpoint.id).where(
                        WebhookEndpoint.id.in_(sorted(failing)),
                        WebhookEndpoint.failing_since <= limit,
                        WebhookEndpoint.enabled.is_(True),
                    )
                )
            ).all()
            if too_long:
                days = f"{settings.webhook_disable_after_seconds / 86400:g}"
                reason = Text("Every delivery attempt failed for {days} days.", days=days)
                disabled = await _stop(session, too_long, now=now, reason=reason)
                stopped |= set(disabled)
                for endpoint_id in disabled:
                    log.warning("webhook endpoint %s disabled: failing too long", endpoint_id)
    return stopped


async def _stop(session: AsyncSession, endpoint_ids: Sequence[int], *, now: datetime, reason: str) -> list[int]:
    """Stop delivering to endpoints: an admin's webhook is disabled (and the admins told), a FHIR
    Subscription goes into ``error``."""
    disabled = await disable_and_tell_admins(session, endpoint_ids, now=now, reason=reason)
    return disabled + await fhir_subscriptions.mark_error(session, endpoint_ids, now=now, reason=reason)
