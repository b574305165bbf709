"""What every request and service needs, built once by the app factory (never at import time)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.caches.auth import AuthCache, KeyCache
from doctordesk.caches.devices import DeviceCache
from doctordesk.caches.token_reads import BatchedReads
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import EventBus
from doctordesk.realtime.hub import Hub
from doctordesk.realtime.metrics import Metrics
from doctordesk.screens.state import ScreenStates
from doctordesk.store.db import Database

# Runs inside a unit of work's transaction with the events it emitted (e.g. writes the push outbox).
# A hook writes in the transaction that emitted ``events`` (an outbox) and may add events of its own to the list.
TransactionHook = Callable[[AsyncSession, list[DomainEvent]], Awaitable[None]]


@dataclass
class Runtime:
    settings: Settings
    db: Database
    bus: EventBus
    clock: Clock
    screens: ScreenStates
    auth_cache: AuthCache = field(default_factory=AuthCache)
    key_cache: KeyCache = field(default_factory=KeyCache)
    # Token reads arriving together share one query (caches/token_reads.py).
    token_reads: BatchedReads[Any] = field(default_factory=BatchedReads)
    transaction_hooks: list[TransactionHook] = field(default_factory=list)
    hub: Hub = field(default_factory=Hub)
    metrics: Metrics = field(default_factory=Metrics)
    device_cache: DeviceCache = field(default_factory=DeviceCache)
    # Small per-process caches of reference data, by name (e.g. the clinic's doctors, hours and fees).
    caches: dict[str, Any] = field(default_factory=dict)

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        """Unix seconds of the injected clock (state tokens use it)."""
        return self.clock.now().timestamp()

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        """Hand events to the bus. Call only after the transaction that caused them has committed."""
        if events:
            self.metrics.events_published.inc(len(events))
            await self.bus.publish(events)
