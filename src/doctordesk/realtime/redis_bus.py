"""The Redis event bus: every instance publishes its events on one channel and delivers every other instance's.

Publishing numbers the events in Redis and publishes them in one script (``realtime/shared.py``): the local
handlers get them as soon as Redis answered, with their number; events from Redis that this instance published are
skipped by their origin. Each (re)connection takes the bus's epoch, marks and sealing key from Redis, so state
tokens are every instance's. Publishing never fails a request: when Redis is unreachable the event reaches this
instance only (under an epoch of its own until it joins again), and the other instances' clients catch up by
polling. The subscriber reconnects with backoff; on every reconnect ``on_reconnect`` runs (the app tells open
streams to refresh and re-checks their tokens, since events may have been lost meanwhile).

The marks are a Redis hash with one field per topic changed within ``KEEP_MARKS_SECONDS`` (a few dozen bytes each;
older ones are forgotten, as in every process: ``screens/state.py``, ``Revisions``); the sealing key
is kept in Redis too, so whoever can read Redis can make state tokens (they name pages; they grant nothing).

A Redis that stops answering without closing its connections (frozen) counts as lost too: an idle subscription
pings every ``PING_EVERY`` seconds, and one that hears nothing back within ``ANSWER_TIMEOUT`` is dropped and
reconnected; a (re)connection counts only once Redis confirmed the subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Sequence

import redis.asyncio as redis
from redis.asyncio.client import PubSub

from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import from_wire, to_wire
from doctordesk.realtime.shared import SharedBus, batch_body
from doctordesk.screens.state import KEEP_MARKS_SECONDS

log = logging.getLogger(__name__)

PING_EVERY = 1.0  # an idle subscription pings Redis this often
ANSWER_TIMEOUT = 2.0  # Redis answers a PING (or confirms a subscription) within this, or the connection is lost

# KEYS: sequence, marks, channel, marks' times. ARGV: the message, now (unix seconds), the oldest time kept, then the
# topics. Numbers, marks and publishes at once, so the numbers reach every subscriber in order. Marks set before
# the oldest time kept are forgotten (``state.KEEP_MARKS_SECONDS``), up to 16 per publish: more than a batch adds.
PUBLISH = """
local seq = redis.call('INCR', KEYS[1])
for i = 4, #ARGV do
  redis.call('HSET', KEYS[2], ARGV[i], seq)
  redis.call('ZADD', KEYS[4], ARGV[2], ARGV[i])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[3], 'LIMIT', 0, 16)
if #old > 0 then
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('ZREM', KEYS[4], unpack(old))
end
redis.call('PUBLISH', KEYS[3], seq .. ' ' .. ARGV[1])
return seq
"""
# KEYS: epoch, key, sequence, marks. ARGV: an epoch and a key, kept when there are none yet.
JOIN = """
redis.call('SET', KEYS[1], ARGV[1], 'NX')
redis.call('SET', KEYS[2], ARGV[2], 'NX')
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]) or '0',
        redis.call('HGETALL', KEYS[4])}
"""


class RedisBus(SharedBus):
    kind = "redis"

    def __init__(
        self,
        url: str,
        *,
        channel: str,
        instance: str,
        on_reconnect: Callable[[], None] = lambda: None,
        on_state: Callable[[bool], None] = lambda _c: None,
        publish_timeout: float = 0.5,
        keep_marks: float = KEEP_MARKS_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            instance=instance, on_reconnect=on_reconnect, on_state=on_state, publish_timeout=publish_timeout
        )
        self.keep_marks, self.clock = keep_marks, clock  # seconds a mark is kept (at least the processes')
        self.url = url
        self.channel = f"{channel}:events"
        self._keys = {name: f"{channel}:screens:{name}" for name in ("epoch", "key", "seq", "marks", "changed")}
        self._rejoin = False
        self._publisher = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=1.0)

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        body = batch_body(self.instance, events)
        payload, topics = to_wire(body).rstrip(b"\n"), body["topics"]
        keys = [self._keys["seq"], self._keys["marks"], self.channel, self._keys["changed"]]
        now = self.clock()
        try:
            async with asyncio.timeout(self.publish_timeout):
                seq = await self._publisher.eval(PUBLISH, 4, *keys, payload, now, now - self.keep_marks, *topics)
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("event bus: publish to Redis failed (%s); other instances catch up by polling", exc)
            await self._unnumbered(events)
            self._rejoin = True
            return
        await self._numbered(events, int(seq))

    async def remember(self, key: str, value: str, *, ttl_seconds: int) -> None:
        """Keep a small value for every instance (presence); a Redis failure is logged, never raised."""
        try:
            async with asyncio.timeout(self.publish_timeout):
                await self._publisher.set(f"{self.channel}:{key}", value, ex=ttl_seconds)
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("event bus: could not store %s in Redis (%s)", key, exc)

    async def recall(self, key: str) -> str | None:
        """A value kept by ``remember`` (None when absent or Redis is unreachable)."""
        try:
            async with asyncio.timeout(self.publish_timeout):
                value = await self._publisher.get(f"{self.channel}:{key}")
        except (redis.RedisError, OSError, TimeoutError):
            return None
        return value.decode() if isinstance(value, bytes) else value

    async def ping(self, *, timeout: float) -> bool:
        """Whether Redis answers a PING within ``timeout`` seconds (readiness)."""
        try:
            async with asyncio.timeout(timeout):
                await self._publisher.ping()
        except (redis.RedisError, OSError, TimeoutError):
            return False
        return True

    async def stop(self) -> None:
        await super().stop()
        await self._publisher.aclose()

    async def _join(self) -> None:
        """Take the bus's epoch, key and marks as they stand (the subscription is confirmed already: what is
        published from now on is read after this)."""
        keys = [self._keys[name] for name in ("epoch", "key", "seq", "marks")]
        fresh = (secrets.token_hex(4), secrets.token_hex(32))
        epoch, key, seq, flat = await self._publisher.eval(JOIN, 4, *keys, *fresh)
        marks = {_text(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}
        self._joined(epoch=_text(epoch), key=bytes.fromhex(_text(key)), marks=marks, seq=int(seq))
        self._rejoin = False

    async def _listen(self) -> None:
        delay = 0.1
        lost = False  # events may have been missed since the last connection failed
        while True:
            client = redis.Redis.from_url(self.url, socket_connect_timeout=1.0)
            pubsub = client.pubsub()
            try:
                async with asyncio.timeout(ANSWER_TIMEOUT):
                    await pubsub.subscribe(self.channel)
                    await _confirmed(pubsub)
                    await self._join()
                self._connected_after(lost)
                delay, lost = 0.1, False
                await self._follow(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # connection lost, refused, or Redis stopped answering: retry with backoff
                self._lost(not lost, exc)
                lost = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                with contextlib.suppress(Exception):
                    await client.aclose()

    async def _follow(self, pubsub: PubSub) -> None:
        """Deliver the subscription's messages until its connection fails, or Redis leaves a PING unanswered."""
        loop = asyncio.get_running_loop()
        heard = loop.time()
        pinged: float | None = None
        while True:
            message = await pubsub.get_message(timeout=0.25)
            now = loop.time()
            if self._rejoin:
                raise ConnectionError("a publish failed: joining the bus again")
            if message is not None:
                heard, pinged = now, None  # anything from Redis shows it answers
                if message.get("type") == "message":
                    await self._receive(message.get("data"))
                continue
            if pinged is None:
                if now - heard >= PING_EVERY:
                    await pubsub.ping()
                    pinged = now
            elif now - pinged > ANSWER_TIMEOUT:
                raise ConnectionError(f"Redis did not answer a PING within {ANSWER_TIMEOUT:g} s")

    async def _receive(self, data: object) -> None:
        if not isinstance(data, bytes | str):
            return
        try:
            seq, _, text = _text(data).partition(" ")
            body = from_wire(text)
            number = int(seq)
            if not isinstance(body, dict):
                raise TypeError("a batch is an object")
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("event bus: ignored a malformed message")
            return
        # This instance's own batches were delivered (and marked) when the script answered.
        await self._from_bus(number, body, delivered_here=body.get("origin") == self.instance)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def _confirmed(pubsub: PubSub) -> None:
    """Wait for Redis to confirm the subscription (a connection to a frozen Redis never gets there)."""
    while True:
        message = await pubsub.get_message(timeout=0.25)
        if message is not None and message.get("type") == "subscribe":
            return
