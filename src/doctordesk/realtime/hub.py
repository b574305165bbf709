"""The streams of this process, the active screens of clients (presence), and the fan-out of events to them.

Every instance sees every event (the bus) and every presence change (a ``screen-presence`` event), so a client's
stream can be on any instance. An event is routed to the open streams whose client's active screen shows one of
the event's topics (an index topic → clients keeps that a lookup, not a scan); revocation of a token closes its
streams here.

Event ids are ``{unix ms}-{sequence}``. The hub remembers, per topic, when the last event touching it arrived, so a
reconnect with ``Last-Event-ID`` can tell whether the client missed something on its screen (then it gets an
immediate ``Timeout``).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import Any

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.inputs import parse_int
from doctordesk.realtime.message import TIMEOUT_ONLY, RealtimeMessage
from doctordesk.realtime.routing import Screen, message_for, routed

PRESENCE = EventKind.SCREEN_PRESENCE
TOKEN_REVOKED = EventKind.TOKEN_REVOKED
QUEUE_LIMIT = 32
LAST_EVENT_LIMIT = 500_000


class Close:
    """Put on a stream's queue to end it."""


CLOSE = Close()


def frame(event_id: str, message: RealtimeMessage | str) -> bytes:
    """One SSE event: its id and the real-time message as data (empty data: a heartbeat)."""
    return f"id: {event_id}\ndata: {message}\n\n".encode()


class Stream:
    """One open SSE stream: its client, user and token, and the encoded frames waiting to be written.

    Lighter than an ``asyncio.Queue``: a list (an empty one is 56 bytes where a deque starts with a 64-slot block
    of ≈ 0.7 KiB; it holds at most ``QUEUE_LIMIT`` frames) and at most one waiting future, since tens of thousands
    are open at once.
    """

    __slots__ = ("client_id", "user_id", "token_id", "expires_at", "pending", "waiter", "overflowed", "last_sent")

    def __init__(self, client_id: str, user_id: int, token_id: int | None, expires_at: datetime | None) -> None:
        self.client_id = client_id
        self.user_id = user_id
        self.token_id = token_id
        self.expires_at = expires_at
        self.pending: list[bytes | Close] = []
        self.waiter: asyncio.Future[None] | None = None
        self.overflowed = False
        self.last_sent = time.monotonic()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def push(self, data: bytes) -> bool:
        if len(self.pending) >= QUEUE_LIMIT:
            # A slow reader: it gets one Timeout once it catches up (it re-polls its screen), not a backlog.
            self.overflowed = True
            return False
        self.pending.append(data)
        self._wake()
        return True

    def close(self) -> None:
        self.pending.clear()
        self.pending.append(CLOSE)
        self._wake()

    async def get(self) -> bytes | Close:
        while not self.pending:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.pending.pop(0)


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_event_id(value: str) -> tuple[int, int] | None:
    ms_text, sep, seq_text = value.partition("-")
    ms = parse_int(ms_text, minimum=0, maximum=10**16 - 1)
    seq = parse_int(seq_text, minimum=0, maximum=10**19 - 1)
    if not sep or ms is None or seq is None:
        return None
    return ms, seq


class Hub:
    def __init__(self, *, presence_size: int = 200_000, instance: str = "") -> None:
        self.instance = instance
        self.started_ms = now_ms()
        self._seq = itertools.count(1)
        self._presence: OrderedDict[str, Screen] = OrderedDict()
        self._presence_size = presence_size
        # A client's (a token's) open streams: a tuple, mostly of one (48 bytes where a set is 216).
        self._streams: dict[str, tuple[Stream, ...]] = {}
        self._by_token: dict[int, tuple[Stream, ...]] = {}
        self._by_topic: dict[str, set[str]] = {}
        self._last_event: dict[str, tuple[int, int]] = {}
        # The service's clock (``Runtime.clock.now``), which the tokens' expiry was stamped by.
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        # Observers (metrics): called with the number of messages an event produced.
        self.on_delivered: Callable[[int], None] = lambda _n: None

    # --- ids -------------------------------------------------------------------------------------------------
    def stamp(self) -> tuple[int, int]:
        return now_ms(), next(self._seq)

    @staticmethod
    def event_id(stamp: tuple[int, int]) -> str:
        return f"{stamp[0]}-{stamp[1]}"

    # --- presence --------------------------------------------------------------------------------------------
    def screen_of(self, client_id: str) -> Screen | None:
        return self._presence.get(client_id)

    def set_presence(self, client_id: str, screen: Screen) -> None:
        old = self._presence.pop(client_id, None)
        self._presence[client_id] = screen
        while len(self._presence) > self._presence_size:
            gone, _ = self._presence.popitem(last=False)
            if gone in self._streams:  # an active client is never forgotten: keep it at the young end
                self._presence[gone] = _
                break
        if client_id in self._streams:
            if old is not None:
                self._unindex(client_id, old.topics)
            self._index(client_id, screen.topics)

    def _index(self, client_id: str, topics: tuple[str, ...]) -> None:
        for topic in topics:
            self._by_topic.setdefault(topic, set()).add(client_id)

    def _unindex(self, client_id: str, topics: tuple[str, ...]) -> None:
        for topic in topics:
            clients = self._by_topic.get(topic)
            if clients is not None:
                clients.discard(client_id)
                if not clients:
                    del self._by_topic[topic]

    # --- streams ---------------------------------------------------------------------------------------------
    @property
    def open_streams(self) -> int:
        return sum(len(s) for s in self._streams.values())

    def open(self, client_id: str, *, user_id: int, token_id: int | None, expires_at: datetime | None) -> Stream:
        stream = Stream(client_id, user_id, token_id, expires_at)
        streams = self._streams.get(client_id)
        if streams is None:
            screen = self._presence.get(client_id)
            if screen is not None:
                self._index(client_id, screen.topics)
        self._streams[client_id] = (*(streams or ()), stream)
        if token_id is not None:
            self._by_token[token_id] = (*self._by_token.get(token_id, ()), stream)
        return stream

    def close(self, stream: Stream) -> None:
        streams = self._streams.get(stream.client_id)
        if streams is not None and stream in streams:
            rest = tuple(s for s in streams if s is not stream)
            if rest:
                self._streams[stream.client_id] = rest
            else:
                del self._streams[stream.client_id]
                screen = self._presence.get(stream.client_id)
                if screen is not None:
                    self._unindex(stream.client_id, screen.topics)
        if stream.token_id is not None:
            tokens = self._by_token.get(stream.token_id)
            if tokens is not None:
                rest = tuple(s for s in tokens if s is not stream)
                if rest:
                    self._by_token[stream.token_id] = rest
                else:
                    del self._by_token[stream.token_id]

    def close_token(self, token_id: int) -> int:
        streams = list(self._by_token.get(token_id, ()))
        for stream in streams:
            stream.close()
        return len(streams)

    def token_ids(self) -> list[int]:
        """The tokens that have an open stream here (each once)."""
        return list(self._by_token)

    def close_all(self) -> None:
        for streams in list(self._streams.values()):
            for stream in list(streams):
                stream.close()

    # --- recovery --------------------------------------------------------------------------------------------
    def missed(self, client_id: str, last_event_id: str | None) -> bool:
        """Whether a client reconnecting with ``last_event_id`` may have missed a message for its screen."""
        if last_event_id is None:
            return False
        last = parse_event_id(last_event_id.strip())
        if last is None or last[0] < self.started_ms or last[0] > now_ms() + 5000:
            return True  # malformed, from before this process knew anything, or from the future
        screen = self._presence.get(client_id)
        if screen is None:
            return True
        for topic in screen.topics:
            seen = self._last_event.get(topic)
            if seen is not None and (seen[0] > last[0] or (seen[0] == last[0] and seen != last)):
                return True
        return False

    # --- events ----------------------------------------------------------------------------------------------
    async def on_event(self, event: DomainEvent) -> None:
        """Bus subscriber: presence changes, token revocations, and routing to the open streams."""
        if event.kind == PRESENCE:
            self._presence_from_event(event.data)
            return
        if event.kind == TOKEN_REVOKED:
            token_id = event.data.get("token_id")
            if isinstance(token_id, int):
                self.close_token(token_id)
            return
        self.route(event.topics)

    # The kinds the hub hears whatever their topics (every other event only by its topics: ``watches``).
    HEARS = frozenset({PRESENCE, TOKEN_REVOKED})

    def watches(self, topics: Collection[str]) -> bool:
        """Whether an event on ``topics`` may send a message here: an open stream's screen shows one of them."""
        by_topic = self._by_topic
        return bool(by_topic) and any(topic in by_topic for topic in routed(topics))

    def passing(self, topics: Collection[str]) -> tuple[int, int]:
        """Note an event on ``topics`` that sends nothing here (for ``missed``: a client reconnecting here with an
        older event id may have missed it on another process). Its stamp."""
        stamp = self.stamp()
        if len(self._last_event) > LAST_EVENT_LIMIT:
            # Forget old topics; a reconnect from before now is then treated as missed (one extra Timeout).
            self._last_event.clear()
            self.started_ms = stamp[0]
        for topic in topics:
            self._last_event[topic] = stamp
        return stamp

    def route(self, topics: tuple[str, ...]) -> int:
        stamp = self.passing(topics)
        clients: set[str] = set()
        for topic in routed(topics):  # quiet topics send nothing: no lookup of their many clients
            found = self._by_topic.get(topic)
            if found:
                clients.update(found)
        if not clients:
            return 0
        event_id = self.event_id(stamp)
        wanted = frozenset(topics)
        frames: dict[RealtimeMessage, bytes] = {}
        sent = 0
        for client_id in clients:
            screen = self._presence.get(client_id)
            if screen is None:
                continue
            msg = message_for(wanted, screen)
            if msg is None:
                continue
            data = frames.get(msg)
            if data is None:
                data = frames[msg] = frame(event_id, msg)
            for stream in self._streams.get(client_id, ()):
                if stream.user_id == screen.user_id and stream.push(data):
                    sent += 1
        self.on_delivered(sent)
        return sent

    def timeout_all(self) -> int:
        """Every open stream refreshes its screen (events may have been lost)."""
        data = frame(self.event_id(self.stamp()), TIMEOUT_ONLY)
        count = 0
        for streams in list(self._streams.values()):
            for stream in streams:
                count += stream.push(data)
        return count

    def heartbeat(self, idle_seconds: float) -> int:
        """A heartbeat to every stream silent for ``idle_seconds``; streams whose token expired are closed."""
        now = time.monotonic()
        wall = self.clock()
        data = frame(self.event_id(self.stamp()), "")
        count = 0
        for streams in list(self._streams.values()):
            for stream in streams:
                if stream.expires_at is not None and stream.expires_at <= wall:
                    stream.close()
                elif now - stream.last_sent >= idle_seconds:
                    count += stream.push(data)
        return count

    async def run_heartbeats(self, interval: float) -> None:
        """Every stream hears something at least every ``interval`` seconds (ticks at half of it)."""
        while True:
            await asyncio.sleep(interval / 2)
            self.heartbeat(interval / 2)

    def recovery_message(self) -> RealtimeMessage:
        return TIMEOUT_ONLY

    # --- presence on the bus ---------------------------------------------------------------------------------
    def restore_presence(self, data: dict[str, Any]) -> None:
        """Presence kept outside this process (Redis), for a client this instance has not seen yet."""
        self._presence_from_event(data, any_origin=True)

    def presence_event(self, client_id: str, screen: Screen) -> DomainEvent:
        return DomainEvent(
            PRESENCE,
            (),
            {
                "origin": self.instance,
                "client_id": client_id,
                "user_id": screen.user_id,
                "screen": screen.screen,
                "poll": screen.poll,
                "topics": list(screen.topics),
            },
        )

    def _presence_from_event(self, data: dict[str, Any], *, any_origin: bool = False) -> None:
        if data.get("origin") == self.instance and not any_origin:
            return
        try:
            screen = Screen(
                user_id=int(data["user_id"]),
                screen=str(data["screen"]),
                poll=str(data["poll"]),
                topics=tuple(str(t) for t in data["topics"]),
            )
            client_id = str(data["client_id"])
        except (KeyError, TypeError, ValueError):
            return
        self.set_presence(client_id, screen)
