"""What a shared bus keeps is bounded: the broker drops a worker that stops reading instead of buffering for it
without end (the others go on at once), and that worker, once it reads again, joins again and tells its open streams
to refresh (one ``Timeout``); the marks kept — in each process, in Redis — are those of the topics changed within
``KEEP_MARKS_SECONDS``, far longer than any token stays current."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as redis

from doctordesk.bootstrap import assemble
from doctordesk.config import Settings
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.broker import Broker
from doctordesk.realtime.hub import Stream
from doctordesk.realtime.redis_bus import RedisBus
from doctordesk.realtime.socket_bus import SocketBus
from doctordesk.screens.state import Revisions, ScreenStates
from tests.integration.realtime.test_shared_screen_state import NOW, VIEWER, current, issued
from tests.support import databases

LIMIT = 256 * 1024


@pytest.fixture
async def small_broker(tmp_path: Path) -> AsyncIterator[tuple[Path, Broker]]:
    path, broker, ready = tmp_path / "bus.sock", Broker(send_limit=LIMIT), threading.Event()
    serving = asyncio.create_task(broker.serve(path, ready))
    async with asyncio.timeout(5):
        while not ready.is_set():
            await asyncio.sleep(0.01)
    yield path, broker
    serving.cancel()


async def test_the_broker_drops_a_worker_that_stops_reading_and_serves_the_others_on(small_broker) -> None:
    path, broker = small_broker
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 24)
    assert "hello" in json.loads(await reader.readline())  # a worker that joined, then reads nothing more
    states = ScreenStates(Revisions())
    worker = SocketBus(str(path), instance="reading")
    worker.attach(states)
    await worker.start()
    try:
        big = "x" * 32 * 1024
        batches = 0
        async with asyncio.timeout(20):
            while len(broker.writers) > 1:  # each publish comes back to the reading worker before it returns
                await worker.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:1",), data={"pad": big})])
                batches += 1
        assert batches * len(big) > LIMIT  # it was let fall that far behind, no further
        assert states.revisions.sequence == batches  # every batch numbered by the broker: none waited for the other
        async with asyncio.timeout(5):  # the dropped one reads what reached it, then the end of its connection
            while await reader.read(1 << 20):
                pass
        await worker.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:1",))])
        assert states.revisions.sequence == batches + 1
    finally:
        await worker.stop()
        writer.close()


class Clock:
    def __init__(self) -> None:
        self.at = 1_000.0

    def __call__(self) -> float:
        return self.at


def test_a_mark_is_forgotten_once_older_than_any_current_token_and_a_stale_token_never_passes() -> None:
    clock = Clock()
    keep = 2 * 900  # twice the max age
    revisions = Revisions(keep=keep, clock=clock)
    states = ScreenStates(revisions, max_age=900)
    token = asyncio.run(issued(states))  # shows "doctor:7"
    revisions.bump(("doctor:7",))  # a change after the token
    assert not current(states, token)
    for n in range(100):
        revisions.bump((f"doctor:{100 + n}",))
    clock.at += keep + 1  # "doctor:7" and the others unchanged for longer than kept
    revisions.bump(("doctor:1",))  # the next event sweeps
    assert set(revisions.marks) == {"doctor:1"}
    # The mark is gone; the token, issued before the change, is far older than the max age: still stale.
    assert not states.unchanged(token, ("doctor:7",), NOW + keep + 1, viewer=VIEWER)


@pytest.mark.redis
async def test_redis_forgets_marks_older_than_kept_and_a_joining_process_adopts_the_rest() -> None:
    error = databases.redis_error()
    if error:
        databases.unavailable("Redis", error)
    channel, clock, keep = secrets.token_hex(4), Clock(), 1800
    first_states = ScreenStates(Revisions())
    first = RedisBus(databases.REDIS_URL, channel=channel, instance="first", keep_marks=keep, clock=clock)
    first.attach(first_states)
    await first.start()
    second = RedisBus(databases.REDIS_URL, channel=channel, instance="second", keep_marks=keep, clock=clock)
    try:
        for n in range(20):
            await first.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=(f"doctor:{100 + n}", "appointments"))])
        clock.at += keep + 1
        await first.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:7",))])
        await first.publish(
            [DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:8",))]
        )  # 16 forgotten per publish: all 20 by now
        client = redis.Redis.from_url(databases.REDIS_URL)
        marks = await client.hgetall(f"{channel}:screens:marks")
        changed = await client.zcard(f"{channel}:screens:changed")
        await client.aclose()
        assert {k.decode() for k in marks} == {"doctor:7", "doctor:8"} and changed == 2
        token = await issued(first_states)  # shows "doctor:7"
        second_states = ScreenStates(Revisions())
        second.attach(second_states)
        await second.start()  # joins with what is kept
        assert set(second_states.revisions.marks) == {"doctor:7", "doctor:8"}
        assert current(first_states, token) and current(second_states, token)
    finally:
        await first.stop()
        await second.stop()


def stalled_reading(bus: SocketBus) -> asyncio.ReadTransport:
    """The transport of ``bus``'s connection to the broker, its reading paused: the process stops reading what the
    bus sends it (as when it is stuck, or stopped by a signal) while its event loop runs on."""
    assert bus._writer is not None
    transport = bus._writer.transport
    assert isinstance(transport, asyncio.ReadTransport)
    transport.pause_reading()
    return transport


def heard_timeout(stream: Stream) -> bool:
    return any(isinstance(f, bytes) and f.endswith(b"data: Timeout\n\n") for f in stream.pending)


async def test_a_worker_dropped_for_not_reading_joins_again_and_its_streams_refresh(small_broker, tmp_path) -> None:
    path, broker = small_broker
    settings = Settings(data_dir=tmp_path / "data", bus_socket=str(path))
    stalled = assemble(settings, bus=SocketBus(str(path), instance="stalled"))  # a server process's wiring
    bus, hub = stalled.runtime.bus, stalled.runtime.hub
    assert isinstance(bus, SocketBus)
    bus.subscribe(stalled.on_event)
    await bus.start()
    other = SocketBus(str(path), instance="other")
    await other.start()
    stream = hub.open("tab", user_id=1, token_id=None, expires_at=None)  # an open stream of the stalled worker
    try:
        transport = stalled_reading(bus)
        big = "x" * 32 * 1024
        async with asyncio.timeout(20):
            while len(broker.writers) > 1:  # the broker buffers up to its limit for the stalled worker, no more
                await other.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:1",), data={"pad": big})])
        assert not stream.pending  # nothing reached the stream while its worker read nothing
        transport.resume_reading()  # it reads what reached it, the end of the connection, and joins again
        async with asyncio.timeout(10):
            while not (bus.connected and len(broker.writers) == 2 and heard_timeout(stream)):
                await asyncio.sleep(0.01)
        assert len(stream.pending) == 1  # one Timeout: the client polls its screen, no backlog
    finally:
        await other.stop()
        await bus.stop()
