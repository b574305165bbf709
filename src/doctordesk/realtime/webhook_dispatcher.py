"""The webhook dispatcher: leases due deliveries, signs and POSTs each to its endpoint, records the outcome.

Runs in the server process (``DOCTORDESK_WEBHOOK_IN_PROCESS``) or in ``doctordesk worker``. At least once: a
delivery counts as delivered only on a 2xx answer; anything else (another status, a timeout, a refused
connection) is retried with exponential backoff and jitter (``webhook_backoff_seconds`` doubling up to
``webhook_backoff_max_seconds``; a longer ``Retry-After`` on 429 or 503 is honoured up to that maximum) until
``webhook_max_attempts``. 410 Gone disables the endpoint at once. An endpoint whose attempts have all failed for
``webhook_disable_after_seconds`` is disabled, and the admins are told. At most ``webhook_concurrency``
requests are in flight per dispatcher (one per lane); deliveries are not ordered.

FHIR Subscriptions' notifications are deliveries too (``Due`` says how each is sent); an endpoint of a
subscription that would be disabled puts the subscription into ``error`` instead (its owner reads why).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from standardwebhooks.webhooks import Webhook

from doctordesk import __version__
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock, SystemClock
from doctordesk.domain.texts import Text
from doctordesk.realtime import webhook_outbox
from doctordesk.realtime.lease import DrainLoop, backoff
from doctordesk.realtime.push import retry_after
from doctordesk.realtime.webhook_outbox import Attempt, Due
from doctordesk.services import fhir_subscriptions
from doctordesk.services.webhook_endpoints import disable_and_tell_admins
from doctordesk.store.db import Database
from doctordesk.store.webhook_tables import WebhookEndpoint

log = logging.getLogger(__name__)

GONE_REASON = Text("The endpoint answered 410 Gone.")
# An attempt's status code (None: no answer), error (None: delivered) and the delay the endpoint asked for.
Outcome = tuple[int | None, str | None, float | None]
# A leased delivery left unsent because the dispatcher is stopping: due again at once, as if never leased.
RELEASED: Outcome = (None, "released", None)
LANE_CONNECTIONS = 4


def signed_headers(due: Due, *, at: datetime) -> dict[str, str]:
    """The delivery's own headers (a subscription's), then the Standard Webhooks headers: id, Unix timestamp,
    and one ``v1,`` signature per valid secret; and the body's type (none for an empty notification)."""
    signatures = " ".join(Webhook(secret).sign(due.message_id, at, due.payload) for secret in due.secrets)
    headers = dict(due.headers)
    headers.update(
        {
            "webhook-id": due.message_id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signatures,
        }
    )
    if due.content_type is not None:
        headers["content-type"] = due.content_type
    return headers


class WebhookDispatcher(DrainLoop):
    """``webhook_concurrency`` lanes, each with its own HTTP client, leasing ``webhook_batch_size`` deliveries at a
    time, sending them one after the other and recording the outcomes, until nothing is due (the lanes start only
    once a first lease found work). A slow endpoint holds
    up only its lane. (Lanes rather than one client with a large pool: the pool's bookkeeping grows with the
    requests waiting in it, and cost several times more CPU per request than the request itself.)"""

    name = "webhook-dispatcher"

    def __init__(self, db: Database, *, settings: Settings, clock: Clock, wall: Clock | None = None) -> None:
        super().__init__(poll_seconds=settings.webhook_poll_seconds)
        self.db = db
        self.settings = settings
        # ``clock`` schedules attempts; ``wall`` stamps the signature, which receivers check against their own
        # clock (they refuse timestamps more than a few minutes off).
        self.clock = clock
        self.wall = wall or SystemClock()
        tls = httpx.create_ssl_context()  # one for every lane: building it reads the CA bundle
        self.clients = [
            httpx.AsyncClient(
                timeout=settings.webhook_timeout_seconds,
                follow_redirects=False,
                verify=tls,
                # A lane sends one request at a time; its pool keeps a few endpoints' connections alive.
                limits=httpx.Limits(max_connections=LANE_CONNECTIONS, max_keepalive_connections=LANE_CONNECTIONS),
                headers={"user-agent": f"doctordesk-webhooks/{__version__}"},
            )
            for _ in range(settings.webhook_concurrency)
        ]

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()

    async def round(self) -> bool:
        """One lease looks for due deliveries (an idle dispatcher costs one query per poll); when it finds some,
        every lane works until nothing is due. True when there was work."""
        first = await self._claim()
        if not first:
            return False
        lanes = [self._lane(client) for client in self.clients[1:]]
        await asyncio.gather(self._lane(self.clients[0], first=first), *lanes)
        return True

    async def _claim(self) -> list[Due]:
        s = self.settings
        return await webhook_outbox.claim(
            self.db, now=self.clock.now(), limit=s.webhook_batch_size, lease_seconds=s.webhook_lease_seconds
        )

    async def _lane(self, client: httpx.AsyncClient, *, first: list[Due] | None = None) -> None:
        due = first
        while True:
            if due is None:
                if self.stopping:
                    return
                due = await self._claim()
            if not due:
                return
            sent = await self._send_batch(client, due)
            now = self.clock.now()
            outcomes = [(d, o) for d, o in sent if o is not RELEASED]
            attempts = [self._attempt(d, code, error, asked, now=now) for d, (code, error, asked) in outcomes]
            gone = {d.endpoint_id for d, (code, _, _) in outcomes if code == 410}
            await self._settle(attempts, gone=gone, now=now, released=[d.id for d, o in sent if o is RELEASED])
            due = None

    async def _send_batch(self, client: httpx.AsyncClient, due: Sequence[Due]) -> list[tuple[Due, Outcome]]:
        """Send a lane's batch one after the other. After an endpoint gave no answer (timeout, refused) or asked
        for a pause (429 or 503 with Retry-After), its other deliveries in the batch are not tried now but
        rescheduled like the failed one (any other error concerns that one delivery). No send starts after half
        the lease, so the batch is settled before its lease ends and no other lane takes it meanwhile; none
        after the dispatcher was told to stop (those are released)."""
        budget = time.monotonic() + self.settings.webhook_lease_seconds / 2
        held: dict[int, Outcome] = {}
        outcomes: list[tuple[Due, Outcome]] = []
        for d in due:
            outcome: Outcome
            if self.stopping:
                outcome = RELEASED
            elif d.endpoint_id in held:
                code, error, asked = held[d.endpoint_id]
                outcome = (code, f"not sent: an earlier delivery failed ({error})"[:300], asked)
            elif time.monotonic() > budget:
                outcome = (None, "not sent: the batch ran out of time", None)
            else:
                outcome = await self._send(client, d)
                code, error, asked = outcome
                if error is not None and (code is None or asked is not None):
                    held[d.endpoint_id] = outcome
            outcomes.append((d, outcome))
        return outcomes

    async def _send(self, client: httpx.AsyncClient, due: Due) -> Outcome:
        """Status code (None: no answer), error text, and the delay the endpoint asked for."""
        try:
            response = await client.request(
                due.method, due.url, content=due.payload.encode(), headers=signed_headers(due, at=self.wall.now())
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

    async def _settle(
        self, attempts: Sequence[Attempt], *, gone: set[int], now: datetime, released: Sequence[int] = ()
    ) -> None:
        failing = {a.endpoint_id for a in attempts if not a.ok}
        limit = now - timedelta(seconds=self.settings.webhook_disable_after_seconds)
        async with self.db.transaction() as session:
            await webhook_outbox.settle(session, attempts, now=now)
            if released:
                await webhook_outbox.release(session, released, now=now)
            if gone:
                await self._stop(session, sorted(gone), now=now, reason=GONE_REASON)
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
                    days = f"{self.settings.webhook_disable_after_seconds / 86400:g}"
                    reason = Text("Every delivery attempt failed for {days} days.", days=days)
                    disabled = await self._stop(session, too_long, now=now, reason=reason)
                    for endpoint_id in disabled:
                        log.warning("webhook endpoint %s disabled: failing too long", endpoint_id)

    @staticmethod
    async def _stop(session: AsyncSession, endpoint_ids: Sequence[int], *, now: datetime, reason: str) -> list[int]:
        """Stop delivering to endpoints: an admin's webhook is disabled (and the admins told), a FHIR
        Subscription goes into ``error``."""
        disabled = await disable_and_tell_admins(session, endpoint_ids, now=now, reason=reason)
        return disabled + await fhir_subscriptions.mark_error(session, endpoint_ids, now=now, reason=reason)
