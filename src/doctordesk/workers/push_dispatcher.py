"""The push dispatcher: claims due outbox rows, hands them to the partner adapter, records the outcome.

Runs in the server process by default (``DOCTORDESK_PUSH_IN_PROCESS``) or as ``doctordesk worker`` processes.
Retries back off exponentially (``push_backoff_seconds`` · 2^(attempt-1), capped at ``push_backoff_max_seconds``,
with jitter), or wait what the partner's ``Retry-After`` asks if that is longer; after ``push_max_attempts`` a
notification is dropped (logged, counted).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.realtime import outbox
from doctordesk.realtime.lease import DrainLoop, backoff
from doctordesk.realtime.metrics import Metrics
from doctordesk.realtime.push import PushAdapter
from doctordesk.store.db import Database

log = logging.getLogger(__name__)

__all__ = ["Dispatcher", "backoff"]


class Dispatcher(DrainLoop):
    name = "push-dispatcher"

    def __init__(
        self, db: Database, adapter: PushAdapter, *, settings: Settings, clock: Clock, metrics: Metrics
    ) -> None:
        super().__init__(poll_seconds=settings.push_poll_seconds)
        self.db = db
        self.adapter = adapter
        self.settings = settings
        self.clock = clock
        self.metrics = metrics

    async def close(self) -> None:
        await self.adapter.close()

    async def round(self) -> bool:
        """One claim–send–settle round; True when it found work (there may be more)."""
        now = self.clock.now()
        due = await outbox.claim(
            self.db, now=now, limit=self.adapter.batch_size, lease_seconds=self.settings.push_lease_seconds
        )
        if not due:
            return False
        ready = [d for d in due if d.token]
        dropped = {d.id: "the device has no push token" for d in due if not d.token}
        outcome = await self.adapter.send(ready) if ready else None
        now = self.clock.now()
        retry: dict[int, tuple[datetime, str]] = {}
        invalid_devices: dict[int, str] = {}
        attempts = {d.id: d.attempts for d in due}
        self.metrics.push_attempts.inc(len(ready))
        if outcome is not None:
            self.metrics.push_sent.inc(len(outcome.sent))
            for row_id, (asked, error) in outcome.retry.items():
                self.metrics.push_failures.labels("retry").inc()
                if attempts[row_id] >= self.settings.push_max_attempts:
                    dropped[row_id] = f"gave up after {attempts[row_id]} attempts: {error}"
                    continue
                delay = backoff(
                    attempts[row_id],
                    base=self.settings.push_backoff_seconds,
                    cap=self.settings.push_backoff_max_seconds,
                    asked=asked,
                )
                retry[row_id] = (now + timedelta(seconds=delay), error)
            for row_id, (device_id, token) in outcome.invalid.items():
                self.metrics.push_failures.labels("invalid-token").inc()
                dropped[row_id] = "the partner reported the token invalid"
                invalid_devices[device_id] = token
            for row_id, error in outcome.dropped.items():
                self.metrics.push_failures.labels("rejected").inc()
                dropped[row_id] = error
        for row_id, error in dropped.items():
            log.warning("push notification %s dropped: %s", row_id, error)
        await outbox.settle(
            self.db,
            now=now,
            sent=outcome.sent if outcome else (),
            retry=retry,
            dropped=dropped,
            invalid_devices=invalid_devices,
        )
        return True
