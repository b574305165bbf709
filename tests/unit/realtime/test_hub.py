"""The hub: presence, fan-out to open streams, closing by token, and Last-Event-ID recovery."""

from __future__ import annotations

import asyncio

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import CLINIC_TOPIC, DomainEvent, clinic_changed, doctor_topic, thread_topic
from doctordesk.realtime.hub import CLOSE, Hub, Stream
from doctordesk.realtime.message import RealtimeMessage
from doctordesk.realtime.routing import Screen

LIST = Screen(user_id=1, screen="appointment-list", poll="/profile/appointments", topics=(doctor_topic(1),))
CHAT = Screen(user_id=1, screen="chat", poll="/profile/messages/load-more", topics=(thread_topic(7),))


def drain(stream: Stream) -> list[object]:
    items = list(stream.pending)
    stream.pending.clear()
    return items


def data(items: list[object]) -> list[str]:
    """The data lines of the queued frames."""
    return [bytes(i).decode().split("data: ", 1)[1].rstrip("\n") for i in items]  # type: ignore[call-overload]


async def test_an_event_reaches_only_the_clients_whose_screen_it_touches() -> None:
    hub = Hub()
    hub.set_presence("a", LIST)
    hub.set_presence("b", CHAT)
    a = hub.open("a", user_id=1, token_id=1, expires_at=None)
    b = hub.open("b", user_id=1, token_id=1, expires_at=None)
    await hub.on_event(DomainEvent(EventKind.APPOINTMENTS_IMPORTED, (doctor_topic(1),)))
    assert data(drain(a)) == ["Timeout"]
    assert drain(b) == []


async def test_presence_follows_the_last_screen_put() -> None:
    hub = Hub()
    stream = hub.open("a", user_id=1, token_id=1, expires_at=None)
    hub.set_presence("a", LIST)
    hub.set_presence("a", CHAT)
    await hub.on_event(DomainEvent(EventKind.APPOINTMENTS_IMPORTED, (doctor_topic(1),)))
    assert drain(stream) == []
    await hub.on_event(DomainEvent(EventKind.CHAT_READ, (thread_topic(7),)))
    assert data(drain(stream)) == [str(RealtimeMessage(endpoint="/profile/messages/load-more"))]


async def test_a_client_id_reused_by_another_user_gets_nothing_of_the_first() -> None:
    hub = Hub()
    hub.set_presence("a", LIST)  # user 1's screen
    intruder = hub.open("a", user_id=2, token_id=9, expires_at=None)
    await hub.on_event(DomainEvent(EventKind.APPOINTMENTS_IMPORTED, (doctor_topic(1),)))
    assert drain(intruder) == []


async def test_revoking_a_token_closes_its_streams_only() -> None:
    hub = Hub()
    mine = hub.open("a", user_id=1, token_id=1, expires_at=None)
    other = hub.open("b", user_id=1, token_id=2, expires_at=None)
    await hub.on_event(DomainEvent(EventKind.TOKEN_REVOKED, (), {"token_id": 1}))
    assert drain(mine) == [CLOSE]
    assert drain(other) == []


async def test_presence_from_another_instance_is_applied_and_our_own_is_ignored() -> None:
    here, there = Hub(instance="here"), Hub(instance="there")
    await here.on_event(there.presence_event("a", LIST))
    assert here.screen_of("a") == LIST
    await here.on_event(DomainEvent(EventKind.SCREEN_PRESENCE, (), {**here.presence_event("a", CHAT).data}))
    assert here.screen_of("a") == LIST


async def test_last_event_id_recovery() -> None:
    hub = Hub()
    hub.set_presence("a", LIST)
    stream = hub.open("a", user_id=1, token_id=1, expires_at=None)
    before = hub.event_id(hub.stamp())
    assert not hub.missed("a", None)
    assert not hub.missed("a", before)
    await asyncio.sleep(0.002)
    hub.route((doctor_topic(1),))
    delivered_id = bytes(drain(stream)[0]).decode().split("\n")[0].removeprefix("id: ")  # type: ignore[call-overload]
    assert hub.missed("a", before)
    assert not hub.missed("a", delivered_id)
    assert hub.missed("a", "nonsense")
    assert hub.missed("a", "1-1")  # older than this process
    assert hub.missed("unknown-client", delivered_id)


async def test_a_slow_reader_gets_one_timeout_instead_of_a_backlog() -> None:
    hub = Hub()
    hub.set_presence("a", CHAT)
    stream = hub.open("a", user_id=1, token_id=1, expires_at=None)
    for _ in range(100):
        hub.route((thread_topic(7),))
    assert stream.overflowed
    assert len(stream.pending) == 32


async def test_heartbeats_go_to_idle_streams_only_and_expired_tokens_close() -> None:
    from datetime import UTC, datetime, timedelta

    hub = Hub()
    idle = hub.open("a", user_id=1, token_id=1, expires_at=None)
    busy = hub.open("b", user_id=1, token_id=2, expires_at=None)
    expired = hub.open("c", user_id=1, token_id=3, expires_at=datetime.now(UTC) - timedelta(seconds=1))
    idle.last_sent -= 10
    assert hub.heartbeat(5) == 1
    assert data(drain(idle)) == [""]
    assert drain(busy) == []
    assert drain(expired) == [CLOSE]


async def test_a_clinic_change_reaches_no_stream() -> None:
    hub = Hub()
    hub.set_presence("a", Screen(1, LIST.screen, LIST.poll, (*LIST.topics, CLINIC_TOPIC)))
    a = hub.open("a", user_id=1, token_id=1, expires_at=None)
    await hub.on_event(clinic_changed())
    assert drain(a) == []
