"""Where leased webhook deliveries wait for their endpoint: one lane per endpoint, with its window (how many of its
requests may be in flight), the deliveries waiting their turn and a hold after failures; the lanes take turns at
the dispatcher's overall bound (``webhook_concurrency``).

A window grows by one with each delivery, shrinks by one with each refusal, and falls back to one request at a
time with a growing hold when the endpoint does not answer or asks for a pause (docs/webhooks.md#delivery-retries-
ordering). What will not be sent (the endpoint held, gone, or the delivery waited here for half its lease) is given
back at once.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.realtime.lease import backoff
from doctordesk.services.webhooks.outbox import Due
from doctordesk.workers.webhook_sending import Outcome

# An endpoint with this many deliveries per request of its window waiting here is left out of the next claims.
WAITING_PER_WINDOW = 4
REMEMBERED_ENDPOINTS = 1000  # beyond this many, endpoints with nothing under way here are forgotten (window and all)


@dataclass(slots=True)
class Endpoint:
    """What the dispatcher knows of one endpoint: its window, the requests in flight, the leased deliveries
    waiting for their turn (with the monotonic time after which they may no longer start), and a hold."""

    window: int = 1
    sending: int = 0
    waiting: deque[tuple[Due, float]] = field(default_factory=deque)
    strikes: int = 0  # attempts in a row without an answer, or answered with a pause
    held: Outcome | None = None  # the outcome that holds the endpoint, until held_until (the dispatcher's clock)
    held_until: datetime | None = None
    gone: bool = False  # answered 410: nothing more until the endpoint is disabled (then its rows wait there)


# Sends one delivery to its endpoint (the dispatcher's; it calls ``sent`` when the request ended).
Deliver = Callable[[Endpoint, Due], Coroutine[Any, Any, None]]
# Hands a delivery back to the outbox: due again at the time given, with a note for the delivery log.
GiveBack = Callable[[Due, datetime, str | None], None]


class Lanes:
    """The endpoints' lanes of one dispatcher, and the sends they start."""

    def __init__(
        self,
        *,
        settings: Settings,
        clock: Clock,
        deliver: Deliver,
        give_back: GiveBack,
        stopping: Callable[[], bool],
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._deliver = deliver
        self._give_back = give_back
        self._stopping = stopping
        self._endpoints: dict[int, Endpoint] = {}
        self._turns: dict[int, None] = {}  # endpoints with deliveries waiting, in the order they take turns
        self.sending = 0
        self._waiting = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.idle = asyncio.Event()  # nothing waits here and nothing is in flight
        self.idle.set()
        self._left_full: set[int] = set()  # endpoints the last claim left out for having plenty waiting here

    # What the claimer may take -----------------------------------------------------------------------------------

    def room(self) -> int:
        """Deliveries this dispatcher may still take: ``webhook_concurrency`` less those waiting for an endpoint
        that can take more and those in flight."""
        busy = self.sending + sum(
            len(e.waiting) for e in self._endpoints.values() if not self._is_full(e) and e.waiting
        )
        return self.settings.webhook_concurrency - busy

    @staticmethod
    def _is_full(e: Endpoint) -> bool:
        return len(e.waiting) >= WAITING_PER_WINDOW * e.window

    def left_out(self, now: datetime) -> set[int]:
        """Endpoints the next claim skips: held, gone, or with plenty waiting here already (remembered, to wake
        the claimer when they take more). Endpoints with nothing under way are forgotten first when there are
        too many."""
        if len(self._endpoints) > REMEMBERED_ENDPOINTS:
            self._forget_idle(now)
        left_out = {
            i
            for i, e in self._endpoints.items()
            if e.gone or self._is_full(e) or (e.held_until is not None and e.held_until > now)
        }
        self._left_full = {i for i in left_out if self._is_full(self._endpoints[i])}
        return left_out

    def takes_more(self, endpoint_id: int, endpoint: Endpoint) -> bool:
        """True, once, when an endpoint the last claim left out for having plenty waiting can take more."""
        if endpoint_id in self._left_full and not self._is_full(endpoint):
            self._left_full.discard(endpoint_id)
            return True
        return False

    def _forget_idle(self, now: datetime) -> None:
        for i, e in list(self._endpoints.items()):
            if not (e.waiting or e.sending or e.gone or (e.held_until is not None and e.held_until > now)):
                del self._endpoints[i]

    # Taking turns --------------------------------------------------------------------------------------------------

    def accept(self, due: Sequence[Due], *, until: float) -> None:
        """Queue leased deliveries in their endpoints' lanes (to start before the monotonic time ``until``)."""
        for d in due:
            endpoint = self._endpoints.get(d.endpoint_id)
            if endpoint is None:
                endpoint = self._endpoints[d.endpoint_id] = Endpoint()
            endpoint.waiting.append((d, until))
            self._turns.setdefault(d.endpoint_id, None)
        self._waiting += len(due)
        self.idle.clear()
        self.pump()

    def pump(self) -> None:
        """Start sends while there is room, the endpoints taking turns; settle at once what will not be sent."""
        limit = self.settings.webhook_concurrency
        progress = True
        while progress and self._turns:
            progress = False
            for endpoint_id in list(self._turns):
                endpoint = self._endpoints[endpoint_id]
                started = self._start_next(endpoint, full=self.sending >= limit)
                if not endpoint.waiting:
                    del self._turns[endpoint_id]
                elif started:
                    del self._turns[endpoint_id]  # to the back of the line
                    self._turns[endpoint_id] = None
                progress = progress or started
        self._check_idle()

    def _start_next(self, endpoint: Endpoint, *, full: bool) -> bool:
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
            self.sending += 1
            task = asyncio.get_running_loop().create_task(self._deliver(endpoint, due))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return True
        return False

    def _not_sent(self, endpoint: Endpoint, until: float) -> tuple[datetime, str | None] | None:
        """A waiting delivery that will not be sent now: when it is due again, and why (for the delivery log).
        None: it may be sent."""
        now = self.clock.now()
        if self._stopping() or endpoint.gone:
            return now, None
        if endpoint.held is not None and endpoint.held_until is not None and endpoint.held_until > now:
            return endpoint.held_until, f"not sent: an earlier delivery failed ({endpoint.held[1]})"
        if time.monotonic() > until:
            return now, "not sent: it waited here for half its lease"
        return None

    # What an attempt teaches -------------------------------------------------------------------------------------

    def sent(self, endpoint: Endpoint) -> None:
        """A request to the endpoint ended (whatever its outcome)."""
        endpoint.sending -= 1
        self.sending -= 1

    def learn(self, endpoint: Endpoint, outcome: Outcome) -> None:
        """Widen, narrow or hold the endpoint's lane after an attempt."""
        code, error, asked = outcome
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

    # Giving back -----------------------------------------------------------------------------------------------------

    def release_waiting(self) -> None:
        """Give back every delivery waiting here (the dispatcher stops)."""
        now = self.clock.now()
        for endpoint in self._endpoints.values():
            while endpoint.waiting:
                due, _ = endpoint.waiting.popleft()
                self._waiting -= 1
                self._give_back(due, now, None)
        self._turns.clear()
        self._check_idle()

    def drop(self, endpoint_id: int) -> None:
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

    def _check_idle(self) -> None:
        if self.sending == 0 and self._waiting == 0:
            self.idle.set()
