"""The webhook dispatcher: leases due deliveries, signs and sends each to its endpoint, records the outcomes.

Runs in the server process (``DOCTORDESK_WEBHOOK_IN_PROCESS``) or in ``doctordesk worker``; at least once, with
retries, per-endpoint windows and holds as docs/webhooks.md#delivery-retries-ordering describes. ``round()`` leases
one batch, sends it and records it (``drain()``, ``doctordesk worker --once``, tests); ``run()`` keeps leasing,
sending and recording side by side. Signing is ``webhook_signing.py``; recording outcomes ``webhook_settling.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver

from doctordesk import __version__
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock, SystemClock
from doctordesk.realtime import outbound
from doctordesk.realtime.lease import DrainLoop, backoff
from doctordesk.realtime.push import retry_after
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.services.webhooks.outbox import Attempt, Due, GivenBack
from doctordesk.store.db import Database
from doctordesk.workers.webhook_settling import GONE_REASON, settle
from doctordesk.workers.webhook_signing import signed_headers

log = logging.getLogger(__name__)

# An attempt's status code (None: no answer), error (None: delivered) and the delay the endpoint asked for.
Outcome = tuple[int | None, str | None, float | None]
FLUSH_SECONDS = 0.02  # outcomes are recorded this long after the first of them, together
# An endpoint with this many deliveries per request of its window waiting here is left out of the next claims.
WAITING_PER_WINDOW = 4
ANSWER_BYTES = 64 * 1024  # read at most this much of an answer (its body is not used)
REMEMBERED_ENDPOINTS = 1000  # beyond this many, endpoints with nothing under way here are forgotten (window and all)


@dataclass(slots=True)
class _Endpoint:
    """What the dispatcher knows of one endpoint: its window, the requests in flight, the leased deliveries
    waiting for their turn (with the monotonic time after which they may no longer start), and a hold."""

    window: int = 1
    sending: int = 0
    waiting: deque[tuple[Due, float]] = field(default_factory=deque)
    strikes: int = 0  # attempts in a row without an answer, or answered with a pause
    held: Outcome | None = None  # the outcome that holds the endpoint, until held_until (the dispatcher's clock)
    held_until: datetime | None = None
    gone: bool = False  # answered 410: nothing more until the endpoint is disabled (then its rows wait there)


class WebhookDispatcher(DrainLoop):
    name = "webhook-dispatcher"

    def __init__(
        self,
        db: Database,
        *,
        settings: Settings,
        clock: Clock,
        wall: Clock | None = None,
        resolver: AbstractResolver | None = None,
    ) -> None:
        super().__init__(poll_seconds=settings.webhook_poll_seconds)
        self.db = db
        self.settings = settings
        # ``clock`` schedules attempts; ``wall`` stamps the signature, which receivers check against their own
        # clock (they refuse timestamps more than a few minutes off).
        self.clock = clock
        self.wall = wall or SystemClock()
        # How names are resolved (the system's resolver unless given: tests give one that answers for any name).
        # Unless private addresses are allowed, it is wrapped to keep public addresses only.
        self._resolver = resolver
        self._checking: outbound.PublicOnlyResolver | None = None
        self._http: aiohttp.ClientSession | None = None
        self._endpoints: dict[int, _Endpoint] = {}
        self._turns: dict[int, None] = {}  # endpoints with deliveries waiting, in the order they take turns
        self._sending = 0
        self._waiting = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._attempts: list[Attempt] = []
        self._given_back: list[GivenBack] = []
        self._gone: set[int] = set()
        self._recorded = asyncio.Event()
        self._flushing = asyncio.Lock()
        self._retries: list[datetime] = []  # retries due before the next poll (a heap): the claimer wakes for them
        self._waiting_for_room = False  # the claimer waits until fewer deliveries wait or are in flight here
        self._left_full: set[int] = set()  # endpoints the last claim left out for having plenty waiting here
        self._closing = False

    # The HTTP client ------------------------------------------------------------------------------------------

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            s = self.settings
            resolver, socket_factory = self._resolver, None
            if not s.webhook_allow_private_addresses:
                # The address rule where it matters: on every address dialled (realtime/outbound.py).
                resolver = self._checking = outbound.PublicOnlyResolver(self._resolver)
                socket_factory = outbound.public_only_socket
            connector = aiohttp.TCPConnector(
                # Our own bounds decide how many requests are in flight, per endpoint and overall.
                limit=s.webhook_concurrency,
                limit_per_host=0,
                ttl_dns_cache=60,
                # The trust of the service's other clients: certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR.
                ssl=httpx.create_ssl_context(),
                resolver=resolver,
                socket_factory=socket_factory,
            )
            self._http = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=s.webhook_timeout_seconds),
                headers={"user-agent": f"doctordesk-webhooks/{__version__}"},
                # The delivery says its content type (none for an empty notification).
                skip_auto_headers=("content-type",),
                auto_decompress=False,
            )
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._checking is not None:
            await self._checking.close()
            self._checking = None

    async def _send(self, due: Due) -> Outcome:
        """Status code (None: no answer), error text, and the delay the endpoint asked for."""
        try:
            async with self._client().request(
                due.method,
                due.url,
                data=due.payload.encode() if due.payload else None,
                headers=signed_headers(due, at=self.wall.now()),
                allow_redirects=False,
            ) as response:
                code = response.status
                # Read the (unused) answer so the connection can serve the next request; a long one is cut off
                # and its connection closed.
                read = 0
                while read < ANSWER_BYTES and (chunk := await response.content.readany()):
                    read += len(chunk)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return None, f"{type(exc).__name__}: {exc}"[:300], None
        if 200 <= code < 300:
            return code, None, None
        asked = retry_after(response) if code in (429, 503) else None
        return code, f"HTTP {code}", asked

    # Rounds (drain, --once, tests) ----------------------------------------------------------------------------

    async def round(self) -> bool:
        """Lease one batch, send it and record the outcomes. True when there was work."""
        if not await self._claim():
            return False
        await self._idle.wait()
        await self._flush()
        return True

    # The service's loop ---------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Lease while there is room, send, and record every ``FLUSH_SECONDS``, until told to stop; then give back
        what was leased but not sent, let the requests in flight finish and record everything."""
        self._closing = False
        recorder = asyncio.create_task(self._record_continuously(), name=f"{self.name}-recorder")
        try:
            while not self.stopping:
                try:
                    await self._lease_more()
                except Exception:  # the database hiccuped: try again at the next poll
                    log.exception("%s: leasing failed", self.name)
                    await self._sleep(self.poll_seconds)
        finally:
            self._release_waiting()
            await self._idle.wait()  # the requests in flight end within the timeout
            self._closing = True
            self._recorded.set()
            await recorder  # records what is left, then ends

    async def stop(self, *, grace_seconds: float = 15.0) -> None:
        self._stopping = True
        self._release_waiting()
        await super().stop(grace_seconds=grace_seconds)

    async def _lease_more(self) -> None:
        if self._room() <= 0:
            # Enough waiting or in flight: lease again when a request finished and there is room.
            self._wake.clear()
            self._waiting_for_room = True
            try:
                await self._sleep(self.poll_seconds)
            finally:
                self._waiting_for_room = False
            return
        started = self.clock.now()
        self._wake.clear()  # a wake-up from now on means: look again
        found = await self._claim()
        if found < self.settings.webhook_batch_size and not self.stopping:
            # Nothing more is due (for the endpoints that can take more): wait to be woken (new deliveries, an
            # endpoint taking more), for the next retry scheduled here, or for the next poll.
            while self._retries and self._retries[0] <= started:
                heapq.heappop(self._retries)
            wait = self.poll_seconds
            if self._retries:
                # A retry is claimable once it is due and recorded: look a recording's interval after it is due,
                # which also takes the retries due meanwhile in the same claim.
                due_in = (self._retries[0] - self.clock.now()).total_seconds()
                wait = min(wait, max(0.0, due_in) + FLUSH_SECONDS)
            await self._sleep(wait)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    def _room(self) -> int:
        """Deliveries this dispatcher may still take: ``webhook_concurrency`` less those waiting for an endpoint
        that can take more and those in flight."""
        busy = self._sending + sum(
            len(e.waiting) for e in self._endpoints.values() if not self._is_full(e) and e.waiting
        )
        return self.settings.webhook_concurrency - busy

    @staticmethod
    def _is_full(e: _Endpoint) -> bool:
        return len(e.waiting) >= WAITING_PER_WINDOW * e.window

    def _left_out(self, now: datetime) -> set[int]:
        """Endpoints the next claim skips: held, gone, or with plenty waiting here already."""
        return {
            i
            for i, e in self._endpoints.items()
            if e.gone or self._is_full(e) or (e.held_until is not None and e.held_until > now)
        }

    async def _claim(self) -> int:
        s, now = self.settings, self.clock.now()
        if len(self._endpoints) > REMEMBERED_ENDPOINTS:
            self._forget_idle(now)
        left_out = self._left_out(now)
        self._left_full = {i for i in left_out if self._is_full(self._endpoints[i])}
        due = await webhook_outbox.claim(
            self.db, now=now, limit=s.webhook_batch_size, lease_seconds=s.webhook_lease_seconds, skip_endpoints=left_out
        )
        if due:
            self._accept(due, until=time.monotonic() + s.webhook_lease_seconds / 2)
        return len(due)

    def _forget_idle(self, now: datetime) -> None:
        for i, e in list(self._endpoints.items()):
            if not (e.waiting or e.sending or e.gone or (e.held_until is not None and e.held_until > now)):
                del self._endpoints[i]

    # Sending --------------------------------------------------------------------------------------------------

    def _accept(self, due: Sequence[Due], *, until: float) -> None:
        for d in due:
            endpoint = self._endpoints.get(d.endpoint_id)
            if endpoint is None:
                endpoint = self._endpoints[d.endpoint_id] = _Endpoint()
            endpoint.waiting.append((d, until))
            self._turns.setdefault(d.endpoint_id, None)
        self._waiting += len(due)
        self._idle.clear()
        self._pump()

    def _pump(self) -> None:
        """Start sends while there is room, the endpoints taking turns; settle at once what will not be sent."""
        limit = self.settings.webhook_concurrency
        progress = True
        while progress and self._turns:
            progress = False
            for endpoint_id in list(self._turns):
                endpoint = self._endpoints[endpoint_id]
                started = self._start_next(endpoint, full=self._sending >= limit)
                if not endpoint.waiting:
                    del self._turns[endpoint_id]
                elif started:
                    del self._turns[endpoint_id]  # to the back of the line
                    self._turns[endpoint_id] = None
                progress = progress or started
        self._check_idle()

    def _start_next(self, endpoint: _Endpoint, *, full: bool) -> bool:
        """Settle the endpoint's waiting deliveries that will not be sent, then start one send if its window and
        the overall bound allow. True when a send started."""
        while endpoint.waiting:
            due, until = endpoint.waiting[0]
            skipped = self._not_sent(endpoint, until)
            if skipped is None and (full or endpoint.sending >= endpoint.window):
                return False
            endpoint.waiting.popleft()
            self._waiting -= 1
            if skipped is not None:
                self._give_back(due, *skipped)
                continue
            endpoint.sending += 1
            self._sending += 1
            task = asyncio.get_running_loop().create_task(self._deliver(endpoint, due))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return True
        return False

    def _not_sent(self, endpoint: _Endpoint, until: float) -> tuple[datetime, str | None] | None:
        """A waiting delivery that will not be sent now: when it is due again, and why (for the delivery log).
        None: it may be sent."""
        now = self.clock.now()
        if self.stopping or endpoint.gone:
            return now, None
        if endpoint.held is not None and endpoint.held_until is not None and endpoint.held_until > now:
            return endpoint.held_until, f"not sent: an earlier delivery failed ({endpoint.held[1]})"
        if time.monotonic() > until:
            return now, "not sent: it waited here for half its lease"
        return None

    async def _deliver(self, endpoint: _Endpoint, due: Due) -> None:
        try:
            outcome = await self._send(due)
        except Exception as exc:  # a bug must not stop the dispatcher; the delivery is retried
            log.exception("%s: sending %s failed", self.name, due.message_id)
            outcome = (None, f"{type(exc).__name__}: {exc}"[:300], None)
        finally:
            endpoint.sending -= 1
            self._sending -= 1
        code, error, asked = outcome
        self._record(due, outcome)
        s = self.settings
        if error is None:
            endpoint.window = min(endpoint.window + 1, s.webhook_endpoint_concurrency)
            endpoint.strikes, endpoint.held, endpoint.held_until = 0, None, None
        elif code == 410:
            endpoint.gone, endpoint.window = True, 1
        elif code is None or asked is not None:
            # No answer, or asked for a pause: one request at a time again, after a hold that grows with each
            # probe that fails (requests that were in flight together count once) and is at least what the
            # endpoint asked for.
            endpoint.window = 1
            now = self.clock.now()
            if endpoint.held_until is None or endpoint.held_until <= now:
                endpoint.strikes += 1
            hold = backoff(
                endpoint.strikes,
                base=s.webhook_backoff_seconds,
                cap=s.webhook_backoff_max_seconds,
                asked=min(asked, s.webhook_backoff_max_seconds) if asked is not None else None,
            )
            until = now + timedelta(seconds=hold)
            if endpoint.held_until is None or until > endpoint.held_until:
                endpoint.held, endpoint.held_until = outcome, until
        else:
            endpoint.window = max(1, endpoint.window - 1)
            endpoint.strikes = 0
        self._pump()
        # Wake the claimer: it waits for room, or this endpoint, left out for having plenty waiting, takes more.
        if self._waiting_for_room and self._room() > 0:
            self._wake.set()
        elif due.endpoint_id in self._left_full and not self._is_full(endpoint):
            self._left_full.discard(due.endpoint_id)
            self._wake.set()

    def _release_waiting(self) -> None:
        """Give back every delivery waiting here (the dispatcher stops)."""
        now = self.clock.now()
        for endpoint in self._endpoints.values():
            while endpoint.waiting:
                due, _ = endpoint.waiting.popleft()
                self._waiting -= 1
                self._give_back(due, now, None)
        self._turns.clear()
        self._check_idle()

    def _check_idle(self) -> None:
        if self._sending == 0 and self._waiting == 0:
            self._idle.set()

    # Recording ------------------------------------------------------------------------------------------------

    def _give_back(self, due: Due, at: datetime, note: str | None) -> None:
        self._given_back.append(GivenBack(due.id, due.attempts, at, note))
        self._recorded.set()

    def _record(self, due: Due, outcome: Outcome) -> None:
        self._recorded.set()
        code, error, asked = outcome
        attempt = self._attempt(due, code, error, asked, now=self.clock.now())
        self._attempts.append(attempt)
        if code == 410:
            self._gone.add(due.endpoint_id)
        if attempt.retry_at is not None and attempt.retry_at < self.clock.now() + timedelta(seconds=self.poll_seconds):
            heapq.heappush(self._retries, attempt.retry_at)

    def _attempt(self, due: Due, code: int | None, error: str | None, asked: float | None, *, now: datetime) -> Attempt:
        s = self.settings
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

    async def _record_continuously(self) -> None:
        """Record the outcomes ``FLUSH_SECONDS`` after the first of them arrived, together; once the loop is
        closing, what is left, and end."""
        while True:
            await self._recorded.wait()
            if not self._closing:
                await asyncio.sleep(FLUSH_SECONDS)
            self._recorded.clear()
            try:
                await self._flush()
            except Exception:  # kept for the next try; the leases hold the rows meanwhile
                log.exception("%s: recording outcomes failed", self.name)
                if self._closing:
                    return  # the leases run out and the deliveries go out again
                await asyncio.sleep(min(1.0, self.poll_seconds))
                self._recorded.set()
                continue
            if self._closing and not (self._attempts or self._given_back):
                return
            if self._closing:  # outcomes came in while that flush ran: record them too before ending
                self._recorded.set()

    async def _flush(self) -> None:
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
            self._drop(endpoint_id)

    def _drop(self, endpoint_id: int) -> None:
        """The endpoint was disabled: what waits for it here is given back (it goes out if the endpoint is enabled
        again), and it is forgotten."""
        endpoint = self._endpoints.get(endpoint_id)
        if endpoint is None:
            return
        now = self.clock.now()
        while endpoint.waiting:
            due, _ = endpoint.waiting.popleft()
            self._waiting -= 1
            self._give_back(due, now, None)
        self._turns.pop(endpoint_id, None)
        if endpoint.sending == 0:
            del self._endpoints[endpoint_id]
        else:
            endpoint.gone = False
        self._check_idle()

    async def _settle(
        self, attempts: Sequence[Attempt], *, gone: Collection[int], now: datetime, given_back: Sequence[GivenBack]
    ) -> set[int]:
        """Record outcomes in one transaction (``webhook_settling.settle``). The endpoints stopped."""
        return await settle(self.db, self.settings, attempts, gone=gone, now=now, given_back=given_back)
