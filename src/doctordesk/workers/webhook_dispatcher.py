"""The webhook dispatcher: leases due deliveries, signs and sends each to its endpoint, records the outcomes.

Runs in the server process (``DOCTORDESK_WEBHOOK_IN_PROCESS``) or in ``doctordesk worker``; at least once, with
retries, per-endpoint windows and holds as docs/webhooks.md#delivery-retries-ordering describes. ``round()`` leases
one batch, sends it and records it (``drain()``, ``doctordesk worker --once``, tests); ``run()`` keeps leasing,
sending and recording side by side. This module leases and runs the loop; its collaborators do the rest: the
endpoints' lanes and windows ``webhook_lanes.py``, the HTTP client ``webhook_sending.py`` (signing
``webhook_signing.py``), the retry schedule and recording outcomes ``webhook_settling.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection, Sequence
from datetime import datetime

from aiohttp.abc import AbstractResolver

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock, SystemClock
from doctordesk.realtime.lease import DrainLoop
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.services.webhooks.outbox import Attempt, Due, GivenBack
from doctordesk.store.db import Database
from doctordesk.workers.webhook_lanes import Endpoint, Lanes
from doctordesk.workers.webhook_sending import Outcome, WebhookSender
from doctordesk.workers.webhook_settling import FLUSH_SECONDS, Recorder, settle

log = logging.getLogger(__name__)


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
        self._settings = settings
        # ``clock`` schedules attempts; ``wall`` stamps the signature (receivers check it against their own clock).
        self.clock = clock
        self.wall = wall or SystemClock()
        self._sender = WebhookSender(settings=settings, wall=self.wall, resolver=resolver)
        self._recorder = Recorder(
            settings=settings,
            clock=clock,
            name=self.name,
            poll_seconds=self.poll_seconds,
            settle=self._settle,
            stopped=self._stopped,
        )
        self._lanes = Lanes(
            settings=settings,
            clock=clock,
            deliver=self._deliver,
            give_back=self._recorder.give_back,
            stopping=lambda: self.stopping,
        )
        self._waiting_for_room = False  # the claimer waits until fewer deliveries wait or are in flight here

    @property
    def settings(self) -> Settings:
        """The settings, shared with the collaborators (set here, they change for all of them)."""
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = self._sender.settings = self._recorder.settings = self._lanes.settings = settings

    @property
    def _sending(self) -> int:
        """Requests in flight."""
        return self._lanes.sending

    @property
    def _closing(self) -> bool:
        """The loop has stopped: what is left is being recorded."""
        return self._recorder.closing

    async def close(self) -> None:
        await self._sender.close()

    async def _send(self, due: Due) -> Outcome:
        """Status code (None: no answer), error text, and the delay the endpoint asked for."""
        return await self._sender.send(due)

    # Rounds (drain, --once, tests) ----------------------------------------------------------------------------

    async def round(self) -> bool:
        """Lease one batch, send it and record the outcomes. True when there was work."""
        if not await self._claim():
            return False
        await self._lanes.idle.wait()
        await self._recorder.flush()
        return True

    # The service's loop ---------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Lease while there is room, send, and record every ``FLUSH_SECONDS``, until told to stop; then give back
        what was leased but not sent, let the requests in flight finish and record everything."""
        self._recorder.closing = False
        recorder = asyncio.create_task(self._recorder.run(), name=f"{self.name}-recorder")
        try:
            while not self.stopping:
                try:
                    await self._lease_more()
                except Exception:  # the database hiccuped: try again at the next poll
                    log.exception("%s: leasing failed", self.name)
                    await self._sleep(self.poll_seconds)
        finally:
            self._lanes.release_waiting()
            await self._lanes.idle.wait()  # the requests in flight end within the timeout
            self._recorder.close()
            await recorder  # records what is left, then ends

    async def stop(self, *, grace_seconds: float = 15.0) -> None:
        self._stopping = True
        self._lanes.release_waiting()
        await super().stop(grace_seconds=grace_seconds)

    async def _lease_more(self) -> None:
        if self._lanes.room() <= 0:
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
            retry = self._recorder.next_retry(after=started)
            wait = self.poll_seconds
            if retry is not None:
                # A retry is claimable once it is due and recorded: look a recording's interval after it is due,
                # which also takes the retries due meanwhile in the same claim.
                due_in = (retry - self.clock.now()).total_seconds()
                wait = min(wait, max(0.0, due_in) + FLUSH_SECONDS)
            await self._sleep(wait)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    async def _claim(self) -> int:
        s, now = self.settings, self.clock.now()
        left_out = self._lanes.left_out(now)
        due = await webhook_outbox.claim(
            self.db, now=now, limit=s.webhook_batch_size, lease_seconds=s.webhook_lease_seconds, skip_endpoints=left_out
        )
        if due:
            self._lanes.accept(due, until=time.monotonic() + s.webhook_lease_seconds / 2)
        return len(due)

    # Sending and recording ------------------------------------------------------------------------------------

    async def _deliver(self, endpoint: Endpoint, due: Due) -> None:
        try:
            outcome = await self._send(due)
        except Exception as exc:  # a bug must not stop the dispatcher; the delivery is retried
            log.exception("%s: sending %s failed", self.name, due.message_id)
            outcome = (None, f"{type(exc).__name__}: {exc}"[:300], None)
        finally:
            self._lanes.sent(endpoint)
        self._recorder.record(due, outcome)
        self._lanes.learn(endpoint, outcome)
        self._lanes.pump()
        # Wake the claimer: it waits for room, or this endpoint, left out for having plenty waiting, takes more.
        if self._waiting_for_room and self._lanes.room() > 0:
            self._wake.set()
        elif self._lanes.takes_more(due.endpoint_id, endpoint):
            self._wake.set()

    def _stopped(self, endpoint_id: int) -> None:
        """Recording stopped the endpoint (disabled): what waits for it here is given back."""
        self._lanes.drop(endpoint_id)

    async def _settle(
        self, attempts: Sequence[Attempt], *, gone: Collection[int], now: datetime, given_back: Sequence[GivenBack]
    ) -> set[int]:
        """Record outcomes in one transaction (``webhook_settling.settle``). The endpoints stopped."""
        return await settle(self.db, self.settings, attempts, gone=gone, now=now, given_back=given_back)
