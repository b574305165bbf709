"""With Redis, presence changes are published for the other instances, and only changes: a client's polls of the
screen it opened publish nothing (SQLite and PostgreSQL, the Redis server)."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio as redis

from doctordesk.config import Settings
from doctordesk.domain.appointments.status import Status
from tests.integration.realtime.test_presence import request
from tests.integration.screens.test_appointment_list import change_status
from tests.support import databases
from tests.support.review import REQUESTED, aid

pytestmark = pytest.mark.redis


@pytest.fixture
def channel() -> str:
    return f"presence-{secrets.token_hex(4)}"


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings], channel: str) -> Settings:
    return settings_factory(database_url, redis_url=databases.redis_url(), redis_channel=channel)


@pytest.fixture
async def published(channel: str) -> AsyncIterator[Any]:
    """A subscriber to the bus's channel, from before the first request."""
    listener = redis.Redis.from_url(databases.redis_url())
    pubsub = listener.pubsub()
    await pubsub.subscribe(f"{channel}:events")
    try:
        yield pubsub
    finally:
        await pubsub.aclose()
        await listener.aclose()


async def presence_events(pubsub: Any, count: int, *, within: float = 5.0) -> list[str]:
    """The screens of the next ``count`` presence events published on the channel."""
    screens: list[str] = []
    async with asyncio.timeout(within):
        while len(screens) < count:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=within)
            if message is not None:
                # "<number> <batch>": the bus numbers every batch (realtime/shared.py)
                events = json.loads(message["data"].split(b" ", 1)[1])["events"]
                screens += [e["data"]["screen"] for e in events if e["kind"] == "screen-presence"]
    return screens


async def test_presence_is_published_on_a_change_only_never_for_a_poll_of_a_known_screen(
    client, login, demo, runtime, published
) -> None:
    headers = {**(await login("doctor1")).headers, "X-Client-Id": "tab-r"}
    page = await request(client, "PUT", "/profile/appointments", headers)
    assert await presence_events(published, 1) == ["appointment-list"]
    polled = {**headers, "X-Screen-State": page["state"]}
    for _ in range(3):
        assert (await request(client, "PATCH", "/profile/appointments", polled))["patches"] == []
    await change_status(runtime, aid(demo, REQUESTED), Status.DECLINED)
    assert (await request(client, "PATCH", "/profile/appointments", polled))["patches"]  # rendered, same screen
    await request(client, "PUT", f"/profile/messages/user-chat?appointment-id={aid(demo, REQUESTED)}", headers)
    await request(client, "PATCH", "/profile/appointments", polled)  # the list beside the chat polls on
    await request(client, "PUT", "/profile/appointments", headers)  # the client closes the chat
    # In the order published: the chat, then the list opened again; none of the polls published anything.
    assert await presence_events(published, 2) == ["chat", "appointment-list"]
