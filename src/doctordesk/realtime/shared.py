"""What a bus shared by several processes (Redis, or the Unix-socket bus of ``serve --workers N``) adds to the
local handlers: one numbering of events and one screen state for every process on it.

The bus numbers every event after commit (its sequence). Each process marks the event's topics with that number
before its handlers see it, and on (re)joining takes the bus's epoch, the marks as they stand and the key that
seals state tokens (``screens/state.py``, ``Revisions``). So a state token issued by one process is honoured by
every other, and an unchanged poll is answered from memory whichever process it reaches.

An event that could not be numbered (the bus is away) is still delivered here, under an epoch of this process
alone, and the bus is joined again: until then this process's tokens are strangers to the others (their polls
render once), never wrongly current.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import LocalHandlers
from doctordesk.screens.state import ScreenStates


class SharedBus(LocalHandlers):
    """A bus several processes share; subclasses move the events and call ``_joined``, ``_numbered`` and
    ``_unnumbered``. ``remember`` and ``recall`` keep small values (presence) for every process on the bus."""

    shared = True
    kind = "shared"  # readiness says "<kind>-connected" or "<kind>-disconnected"

    def __init__(
        self,
        *,
        instance: str,
        on_reconnect: Callable[[], None] = lambda: None,
        on_state: Callable[[bool], None] = lambda _c: None,
        publish_timeout: float = 0.5,
    ) -> None:
        super().__init__()
        self.instance = instance
        self.on_reconnect = on_reconnect
        self.on_state = on_state
        self.publish_timeout = publish_timeout
        self.connected = False
        self.screens: ScreenStates | None = None

    def attach(self, screens: ScreenStates) -> None:
        """Keep ``screens``' marks, epoch and key in step with the bus (a server's; a ``worker`` has none)."""
        self.screens = screens

    @property
    def state(self) -> str:
        return f"{self.kind}-connected" if self.connected else f"{self.kind}-disconnected"

    async def ping(self, *, timeout: float) -> bool:
        raise NotImplementedError

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        raise NotImplementedError

    async def remember(self, key: str, value: str, *, ttl_seconds: int) -> None:
        raise NotImplementedError

    async def recall(self, key: str) -> str | None:
        raise NotImplementedError

    def _set_connected(self, value: bool) -> None:
        if self.connected != value:
            self.connected = value
            self.on_state(value)

    def _joined(self, *, epoch: str, key: bytes, marks: dict[str, int], seq: int) -> None:
        """The bus's screen state as it stands at its number ``seq``, taken on (re)joining it."""
        if self.screens is not None:
            self.screens.revisions.adopt(epoch, marks, seq)
            self.screens.share_key(key)

    async def _numbered(self, events: Sequence[DomainEvent], seq: int) -> None:
        """Events the bus numbered ``seq``: mark their topics, then hand them to the handlers."""
        if self.screens is not None:
            for event in events:
                self.screens.revisions.bump(event.topics, seq)
        for event in events:
            await self.deliver(event)

    async def _unnumbered(self, events: Sequence[DomainEvent]) -> None:
        """Events of this process the bus did not number: this process alone, under an epoch of its own."""
        if self.screens is not None:
            self.screens.revisions.invalidate()
            for event in events:
                self.screens.revisions.bump(event.topics)
        for event in events:
            await self.deliver(event)
