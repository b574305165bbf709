"""What a bus shared by several processes (Redis, or the Unix-socket bus of ``serve --workers N``) adds to the
local handlers: one numbering of events and one screen state for every process on it.

The bus numbers every event after commit (its sequence). Each process marks the event's topics with that number
before its handlers see it, and on (re)joining takes the bus's epoch, the marks as they stand and the key that
seals state tokens (``screens/state.py``, ``Revisions``). So a state token issued by one process is honoured by
every other, and an unchanged poll is answered from memory whichever process it reaches.

An event that could not be numbered (the bus is away) is still delivered here, under an epoch of this process
alone, and the bus is joined again: until then this process's tokens are strangers to the others (their polls
render once), never wrongly current.

An event of another process is handled here only when this process listens for it (``wants``: one of its streams
shows one of the event's topics, or its kind is one this process hears whatever the topics: a revoked token, a
presence change, a cache's or a background task's kind). Every batch says its kinds and topics beside its events
(``batch_body``), so a batch nobody here listens for costs its marks only (and ``passing``: the hub notes when its
topics last changed), not the decoding and the fan-out of its events. A batch without them (from a process that
does not say) is handled in full.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

from doctordesk.domain.event_kinds import BadEvent
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import LocalHandlers, event_from_json, event_to_json
from doctordesk.screens.state import ScreenStates

log = logging.getLogger(__name__)

# Whether a process listens for a batch of these kinds on these topics (``SharedBus.wants``).
Wants = Callable[[Collection[str], Collection[str]], bool]


def batch_body(origin: str, events: Sequence[DomainEvent]) -> dict[str, Any]:
    """A batch as both buses carry it: its origin, its kinds and topics (each once; what a receiver that does not
    listen for them needs: ``SharedBus._from_bus``), and its events."""
    return {
        "origin": origin,
        "kinds": sorted({str(e.kind) for e in events}),
        "topics": sorted({t for e in events for t in e.topics}),
        "events": [event_to_json(e) for e in events],
    }


def _listens(_kinds: Collection[str], _topics: Collection[str]) -> bool:
    return True


def batch_events(body: dict[str, Any]) -> list[DomainEvent]:
    """The events of a batch as both buses carry it (``{"origin", "events": [...]}``, JSON). An event of a kind this
    process does not know, or with a payload its kind does not carry, is left out and logged: the rest of the batch
    is delivered."""
    events: list[DomainEvent] = []
    for raw in body.get("events", []):
        try:
            events.append(event_from_json(raw))
        except BadEvent as exc:
            log.warning("event bus: refused an event from %s: %s", body.get("origin"), exc)
    return events


class SharedBus(LocalHandlers):
    """A bus several processes share; subclasses move the events and call ``_joined``, ``_numbered`` (or
    ``_from_bus``) and ``_unnumbered``. ``remember`` and ``recall`` keep small values (presence) for every process
    on the bus. Each runs one listening task (``_listen``): ``start`` starts it and waits up to ``first_wait``
    seconds for its first connection, ``stop`` ends it; the task reports ``_connected_after`` and ``_lost``."""

    shared = True
    kind = "shared"  # readiness says "<kind>-connected" or "<kind>-disconnected"
    first_wait = 2.0  # seconds ``start`` waits for the first connection (so early events reach the others)

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
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()  # the first connection succeeded or failed
        # Whether this process listens for another's batch (its kinds, its topics); by default every batch. A
        # server's assembly says (``bootstrap.Assembly.wants``).
        self.wants: Wants = _listens
        # Told the topics of every batch of another process that was only marked here (nobody listens).
        self.passing: Callable[[Sequence[str]], None] = lambda _topics: None
        self.marked_only = 0  # batches of other processes only marked here

    def attach(self, screens: ScreenStates) -> None:
        """Keep ``screens``' marks, epoch and key in step with the bus (a server's; a ``worker`` has none)."""
        self.screens = screens

    @property
    def state(self) -> str:
        return f"{self.kind}-connected" if self.connected else f"{self.kind}-disconnected"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen(), name=f"{self.kind}-bus")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.first_wait):
                await self._ready.wait()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen(self) -> None:
        """Connect, join, follow the bus until the connection fails; again, with backoff, until cancelled."""
        raise NotImplementedError

    def _connected_after(self, lost: bool) -> None:
        """The listening task (re)joined the bus; after a loss, events may have been missed: ``on_reconnect``."""
        self._set_connected(True)
        self._ready.set()
        if lost:
            log.warning("event bus (%s): joined again; screens re-render once, stream tokens re-checked", self.kind)
            self.on_reconnect()

    def _lost(self, first: bool, exc: BaseException) -> None:
        """The listening task lost the bus (logged once per loss, ``first``); it retries with backoff."""
        if first:
            log.warning("event bus (%s) unavailable (%s); retrying", self.kind, exc or type(exc).__name__)
        self._set_connected(False)
        self._ready.set()

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

    async def _from_bus(self, seq: int, body: dict[str, Any], *, delivered_here: bool, mine: bool = False) -> None:
        """A batch the bus numbered ``seq`` as it came back from the bus. When this process delivered it already
        (its own publish, delivered when the bus answered or when it gave up waiting) only the marks are taken. A
        batch of another process that nobody here listens for (``wants``) is only marked; otherwise, and for this
        process's own batch coming back, its events are delivered here as ``_numbered``."""
        said_kinds, said_topics = body.get("kinds"), body.get("topics")
        told = isinstance(said_kinds, list) and isinstance(said_topics, list)
        kinds: list[str] = said_kinds if isinstance(said_kinds, list) else []
        topics: list[str] = said_topics if isinstance(said_topics, list) else []
        if not delivered_here and (mine or not told or self.wants(kinds, topics)):
            await self._numbered(batch_events(body), seq)
            return
        if not told:  # this process's own batch of an older form: the topics are in its events
            topics = sorted({t for e in batch_events(body) for t in e.topics})
        if self.screens is not None:
            self.screens.revisions.bump(topics, seq)
        if not delivered_here:
            self.marked_only += 1
            self.passing(topics)

    async def _unnumbered(self, events: Sequence[DomainEvent]) -> None:
        """Events of this process the bus did not number: this process alone, under an epoch of its own."""
        if self.screens is not None:
            self.screens.revisions.invalidate()
            for event in events:
                self.screens.revisions.bump(event.topics)
        for event in events:
            await self.deliver(event)
