"""What every request and service needs, built once by the app factory (never at import time)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import EventBus
from doctordesk.screens.state import ScreenStates
from doctordesk.services.auth_cache import AuthCache
from doctordesk.store.db import Database


@dataclass
class Runtime:
    settings: Settings
    db: Database
    bus: EventBus
    clock: Clock
    screens: ScreenStates
    auth_cache: AuthCache = field(default_factory=AuthCache)

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        """Unix seconds of the injected clock (state tokens use it)."""
        return self.clock.now().timestamp()

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        """Hand events to the bus. Call only after the transaction that caused them has committed."""
        if events:
            await self.bus.publish(events)
