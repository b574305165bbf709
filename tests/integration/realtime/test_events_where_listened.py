"""An event of another process is handled only where something listens for it (realtime/shared.py,
``bootstrap.Assembly.wants``): a process none of whose streams shows the event's topics, and that hears none of its
kinds, only marks it (its screen state moves on, a reconnecting client still learns it missed something), while a
process with a stream on one of the topics delivers the message, and kinds heard whatever the topics (a revoked
token) reach every process. Over a real Unix socket and broker and over Redis, in this process; the process that
listens is a server's assembly as ``serve`` builds it (not started: nothing here needs its database)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from doctordesk.bootstrap import Assembly, assemble
from doctordesk.config import Settings
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.hub import CLOSE, Stream
from doctordesk.realtime.redis_bus import RedisBus
from doctordesk.realtime.routing import Screen
from doctordesk.realtime.shared import SharedBus
from doctordesk.realtime.socket_bus import SocketBus
from tests.integration.realtime.test_shared_screen_state import broker  # noqa: F401
from tests.support import databases

LOAD_MORE = "/profile/messages/load-more"
CHAT = Screen(user_id=7, screen="chat", poll=LOAD_MORE, topics=("thread:5", "appointment:5"))


def chat_message(thread: int) -> DomainEvent:
    data = {"appointment_id": thread, "thread_id": thread, "message_id": 1, "sender_id": 8}
    return DomainEvent(EventKind.CHAT_MESSAGE, topics=(f"thread:{thread}", "doctor:7"), data=data)


@pytest.fixture(params=["socket", pytest.param("redis", marks=pytest.mark.redis)])
async def sender_and_server(
    request: pytest.FixtureRequest,
    broker: Path,  # noqa: F811
    settings_factory: Callable[..., Settings],
    tmp_path: Path,
) -> AsyncIterator[tuple[SharedBus, Assembly]]:
    """A bare process that publishes, and a server's assembly on the same bus, both joined."""
    channel = secrets.token_hex(4)

    def bus(instance: str) -> SharedBus:
        if request.param == "socket":
            return SocketBus(str(broker), instance=instance)
        error = databases.redis_error()
        if error:
            databases.unavailable("Redis", error)
        return RedisBus(databases.REDIS_URL, channel=channel, instance=instance)

    sender = bus("sender")
    server = assemble(settings_factory(f"sqlite+aiosqlite:///{tmp_path / 'unused.db'}"), bus=bus("server"))
    server.runtime.bus.subscribe(server.on_event)
    for shared in (sender, server.runtime.bus):
        await shared.start()
    yield sender, server
    for shared in (sender, server.runtime.bus):
        await shared.stop()


async def heard(server: Assembly, sequence: int) -> None:
    """Wait until the server marked the bus's batch ``sequence`` (handled or not)."""
    async with asyncio.timeout(5):
        while server.runtime.screens.revisions.sequence < sequence:
            await asyncio.sleep(0.01)


def received(server: Assembly) -> float:
    return server.runtime.metrics.events_received._value.get()  # type: ignore[attr-defined,no-any-return]


def marked_only(server: Assembly) -> float:
    return server.runtime.metrics.events_marked_only._value.get()  # type: ignore[attr-defined,no-any-return]


async def test_a_batch_no_stream_here_shows_is_only_marked_and_one_a_stream_shows_reaches_it(
    sender_and_server,
) -> None:
    sender, server = sender_and_server
    hub, screens = server.runtime.hub, server.runtime.screens
    hub.set_presence("c-chat", CHAT)
    stream: Stream = hub.open("c-chat", user_id=7, token_id=31, expires_at=None)
    hub.set_presence("c-elsewhere", Screen(user_id=9, screen="chat", poll=LOAD_MORE, topics=("thread:6",)))
    before = hub.event_id(hub.stamp())
    start = screens.revisions.sequence

    await sender.publish([chat_message(6)])  # another chat: no stream here shows it
    await heard(server, start + 1)
    assert (received(server), marked_only(server)) == (0, 1)
    assert screens.revisions.stamp(("thread:6",)) == start + 1  # the screen state moved on all the same
    assert not stream.pending
    # A client of that chat reconnecting here with an older event id learns that it missed something.
    assert hub.missed("c-elsewhere", before)

    await sender.publish([chat_message(5)])  # the open chat
    await heard(server, start + 2)
    assert (received(server), marked_only(server)) == (1, 1)
    (message,) = stream.pending
    assert isinstance(message, bytes) and message.endswith(f"data: {LOAD_MORE}\n\n".encode())

    # A revoked token is heard whatever its topics: the stream it opened closes here.
    revoked = DomainEvent(EventKind.TOKEN_REVOKED, topics=("user:7",), data={"token_id": 31, "user_id": 7})
    await sender.publish([revoked])
    await heard(server, start + 3)
    assert (received(server), marked_only(server)) == (2, 1)
    assert list(stream.pending) == [CLOSE]


async def test_a_process_with_no_open_stream_hears_only_the_kinds_it_listens_for(sender_and_server) -> None:
    sender, server = sender_and_server
    assert {EventKind.TOKEN_REVOKED, EventKind.SCREEN_PRESENCE, EventKind.USER_LANGUAGE} <= server.hears()
    assert EventKind.CHAT_MESSAGE not in server.hears()
    start = server.runtime.screens.revisions.sequence
    presence = server.runtime.hub.presence_event("c-9", Screen(user_id=9, screen="chat", poll=LOAD_MORE,
                                                               topics=("thread:9",)))  # fmt: skip
    presence.data["origin"] = "sender"
    await sender.publish([chat_message(9), chat_message(10)])
    await sender.publish([presence])
    await heard(server, start + 2)
    assert (received(server), marked_only(server)) == (1, 1)
    assert server.runtime.hub.screen_of("c-9") is not None  # presence reached this process
