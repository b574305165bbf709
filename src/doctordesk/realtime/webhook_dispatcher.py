"""The webhook dispatcher: leases due deliveries, signs and POSTs each to its endpoint, records the outcome.

Runs in the server process (``DOCTORDESK_WEBHOOK_IN_PROCESS``) or in ``doctordesk worker``. At least once: a
delivery counts as delivered only on a 2xx answer; anything else (another status, a timeout, a refused
connection) is retried with exponential backoff and jitter (``webhook_backoff_seconds`` doubling up to
``webhook_backoff_max_seconds``; a longer ``Retry-After`` on 429 or 503 is honoured up to that maximum) until
``webhook_max_attempts``. 410 Gone disables the endpoint at once. An endpoint whose attempts have all failed for
``webhook_disable_after_seconds`` is disabled, and the admins are told. At most ``webhook_concurrency``
requests are in flight per dispatcher; deliveries are not ordered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import httpx
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from doctordesk import __version__
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock, SystemClock
from doctordesk.realtime import webhook_outbox
from doctordesk.realtime.lease import DrainLoop, backoff
from doctordesk.realtime.push import retry_after
from doctordesk.realtime.webhook_outbox import Attempt, Due
from doctordesk.services.webhook_endpoints import disable_and_tell_admins
from doctordesk.store.db import Database
from doctordesk.store.webhook_tables import WebhookEndpoint

log = logging.getLogger(__name__)

GONE_REASON = "The endpoint answered 410 Gone."


def signed_headers(due: Due, *, at: datetime) -> dict[str, str]:
    """The Standard Webhooks headers: id, Unix timestamp, and one ``v1,`` signature per valid secret."""
    signatures = " ".join(Webhook(secret).sign(due.message_id, at, due.payload) for secret in due.secrets)
    return {
        "webhook-id": due.message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signatures,
        "content-type": "application/json",
    }


class WebhookDispatcher(DrainLoop):
    name = "webhook-dispatcher"

    def __init__(
        self,
        db: Database,
        *,
        settings: Settings,
        clock: Clock,
        wall: Clock | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(poll_seconds=settings.webhook_poll_seconds)
        self.db = db
        self.settings = settings
        # ``clock`` schedules attempts; ``wall`` stamps the signature, which receivers check against their own
        # clock (they refuse timestamps more than a few minutes off).
        self.clock = clock
        self.wall = wall or SystemClock()
        concurrency = settings.webhook_concurrency
        self.limit = asyncio.Semaphore(concurrency)
        self.client = httpx.AsyncClient(
            timeout=settings.webhook_timeout_seconds,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            headers={"user-agent": f"doctordesk-webhooks/{__version__}"},
            transport=transport,
        )

    async def close(self) -> None:
        await self.client.aclose()

    async def round(self) -> bool:
        s = self.settings
        due = await webhook_outbox.claim(
            self.db, now=self.clock.now(), limit=s.webhook_batch_size, lease_seconds=s.webhook_lease_seconds
        )
        if not due:
            return False
        outcomes = list(zip(due, await asyncio.gather(*(self._send(d) for d in due)), strict=True))
        now = self.clock.now()
        attempts = [self._attempt(d, code, error, asked, now=now) for d, (code, error, asked) in outcomes]
        gone = {d.endpoint_id for d, (code, _, _) in outcomes if code == 410}
        await self._settle(attempts, gone=gone, now=now)
        return True

    async def _send(self, due: Due) -> tuple[int | None, str | None, float | None]:
        """Status code (None: no answer), error text, and the delay the endpoint asked for."""
        async with self.limit:
            try:
                response = await self.client.post(
                    due.url, content=due.payload.encode(), headers=signed_headers(due, at=self.wall.now())
                )
            except httpx.HTTPError as exc:
                return None, f"{type(exc).__name__}: {exc}"[:300], None
        code = response.status_code
        if 200 <= code < 300:
            return code, None, None
        asked = retry_after(response) if code in (429, 503) else None
        return code, f"HTTP {code}", asked

    def _attempt(self, due: Due, code: int | None, error: str | None, asked: float | None, *, now: datetime) -> Attempt:
        s = self.settings
        if error is None:
            return Attempt(due.id, due.endpoint_id, ok=True, status_code=code)
        if code == 410 or due.attempts >= s.webhook_max_attempts:
            reason = GONE_REASON if code == 410 else f"gave up after {due.attempts} attempts: {error}"
            return Attempt(due.id, due.endpoint_id, ok=False, status_code=code, error=reason)
        delay = backoff(
            due.attempts,
            base=s.webhook_backoff_seconds,
            cap=s.webhook_backoff_max_seconds,
            asked=min(asked, s.webhook_backoff_max_seconds) if asked is not None else None,
        )
        return Attempt(
            due.id, due.endpoint_id, ok=False, status_code=code, error=error, retry_at=now + timedelta(seconds=delay)
        )

    async def _settle(self, attempts: Sequence[Attempt], *, gone: set[int], now: datetime) -> None:
        failing = {a.endpoint_id for a in attempts if not a.ok}
        limit = now - timedelta(seconds=self.settings.webhook_disable_after_seconds)
        async with self.db.transaction() as session:
            await webhook_outbox.settle(session, attempts, now=now)
            if gone:
                await disable_and_tell_admins(session, sorted(gone), now=now, reason=GONE_REASON)
            if failing - gone:
                too_long = (
                    await session.scalars(
                        select(WebhookEndpoint.id).where(
                            WebhookEndpoint.id.in_(sorted(failing - gone)),
                            WebhookEndpoint.failing_since <= limit,
                            WebhookEndpoint.enabled.is_(True),
                        )
                    )
                ).all()
                if too_long:
                    days = self.settings.webhook_disable_after_seconds / 86400
                    disabled = await disable_and_tell_admins(
                        session, too_long, now=now, reason=f"Every delivery attempt failed for {days:g} days."
                    )
                    for endpoint_id in disabled:
                        log.warning("webhook endpoint %s disabled: failing too long", endpoint_id)


def build(db: Database, settings: Settings, clock: Clock) -> WebhookDispatcher:
    return WebhookDispatcher(db, settings=settings, clock=clock)
