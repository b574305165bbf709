"""Processes on one shared bus share one screen state (realtime/shared.py): a token issued by one is judged the
same way by the other, an event through either makes every older token stale everywhere, and a process that lost
the bus never answers another's token wrongly. Over a real Unix socket and broker (realtime/broker.py) and over
Redis, in this process."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.broker import Broker
from doctordesk.realtime.redis_bus import RedisBus
from doctordesk.realtime.shared import SharedBus
from doctordesk.realtime.socket_bus import SocketBus
from doctordesk.screens.protocol import Page, el
from doctordesk.screens.state import Revisions, ScreenStates, Viewer
from tests.support import databases

VIEWER = Viewer("tab", 7, "doctor")
TOPICS = ("doctor:7",)
NOW = 1_800_000_000.0


async def issued(states: ScreenStates, value: int = 0) -> str:
    async def render() -> Page:
        return Page("counter", "Counter", "/c", "/c", 30, (el("v", "Text", value=value),))

    page = await states.page(TOPICS, NOW, render, viewer=VIEWER)
    return str(page.state)


def current(states: ScreenStates, token: str) -> bool:
    return states.unchanged(token, TOPICS, NOW + 1, viewer=VIEWER)


async def settle(buses: list[SharedBus], events: int) -> None:
    """Wait until every bus delivered ``events`` events to its handlers."""
    async with asyncio.timeout(5):
        while any(getattr(b, "heard", 0) < events for b in buses):
            await asyncio.sleep(0.01)


def counting(bus: SharedBus) -> SharedBus:
    bus.heard = 0  # type: ignore[attr-defined]

    async def heard(_event: DomainEvent) -> None:
        bus.heard += 1  # type: ignore[attr-defined]

    bus.subscribe(heard)
    return bus


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Path]:
    path = tmp_path / "bus.sock"
    ready = threading.Event()
    serving = asyncio.create_task(Broker().serve(path, ready))
    async with asyncio.timeout(5):
        while not ready.is_set():
            await asyncio.sleep(0.01)
    yield path
    serving.cancel()


@pytest.fixture(params=["socket", pytest.param("redis", marks=pytest.mark.redis)])
async def two(request: pytest.FixtureRequest, broker: Path) -> AsyncIterator[list[tuple[SharedBus, ScreenStates]]]:
    channel = secrets.token_hex(4)
    pairs = []
    for n in range(2):
        if request.param == "socket":
            bus: SharedBus = SocketBus(str(broker), instance=f"p{n}")
        else:
            error = databases.redis_error()
            if error:
                databases.unavailable("Redis", error)
            bus = RedisBus(databases.REDIS_URL, channel=channel, instance=f"p{n}")
        states = ScreenStates(Revisions())
        bus.attach(states)
        pairs.append((counting(bus), states))
    for bus, _ in pairs:
        await bus.start()
    yield pairs
    for bus, _ in pairs:
        await bus.stop()


async def test_a_token_of_one_process_is_current_on_the_other_until_an_event_through_either(two) -> None:
    (bus1, states1), (bus2, states2) = two
    await bus1.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=TOPICS)])  # marks before the tokens too
    await settle([bus1, bus2], 1)
    token = await issued(states1)
    assert current(states2, token) and current(states1, token)
    await bus2.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=("doctor:8",))])
    await settle([bus1, bus2], 2)
    assert current(states1, token) and current(states2, token)  # another topic: still current
    await bus2.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=TOPICS)])
    await settle([bus1, bus2], 3)
    assert not current(states1, token) and not current(states2, token)
    fresh = await issued(states2, 1)
    assert current(states1, fresh)


async def test_a_token_changed_or_sealed_by_a_stranger_is_no_token_anywhere(two) -> None:
    (_, states1), (_, states2) = two
    stranger = ScreenStates(Revisions())
    stranger.revisions.adopt(states1.revisions.epoch, {}, 0)
    assert not current(states2, await issued(stranger))
    token = await issued(states1)
    assert not current(states2, token[:-1] + ("1" if token.endswith("0") else "0"))


async def test_events_a_process_could_not_hand_to_the_bus_reach_it_alone_under_an_epoch_of_its_own(
    two, broker: Path
) -> None:
    (bus1, states1), (bus2, states2) = two
    token = await issued(states2)
    if isinstance(bus1, SocketBus):
        bus1.path = str(broker.with_name("gone.sock"))
        bus1._drop()  # the connection breaks; rejoining fails while the broker is elsewhere
    else:
        bus1.url = "redis://127.0.0.1:1/0"
        await bus1._publisher.aclose()
        bus1._publisher = type(bus1._publisher).from_url(bus1.url, socket_connect_timeout=0.2)
    await bus1.publish([DomainEvent(EventKind.ADMIN_CHANGED, topics=TOPICS)])
    assert bus1.heard >= 1  # type: ignore[attr-defined]
    assert states1.revisions.epoch != states2.revisions.epoch
    assert not current(states1, token)  # its own view moved on: the other's token renders here
    assert not current(states2, await issued(states1))  # and its tokens are strangers to the other
