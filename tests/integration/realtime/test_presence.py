"""Presence (which screen a client has) is the screen it opened last (PUT); a poll tells it to a service that does
not know it (a restart), and leaves it as it is otherwise, for every screen (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from doctordesk.app import create_app
from doctordesk.realtime.routing import Screen
from doctordesk.runtime import Runtime
from tests.support.review import PENDING_5, REQUESTED, aid


@dataclass(frozen=True)
class ScreenCase:
    user: str
    put: str  # {a}: the appointment
    poll: str
    offers: bool = False

    def paths(self, demo: Any) -> tuple[str, str]:
        a = aid(demo, PENDING_5 if self.offers else REQUESTED)
        return self.put.format(a=a), self.poll.format(a=a)


SCREENS = {
    "appointment-list": ScreenCase("doctor1", "/profile/appointments", "/profile/appointments"),
    "review-and-approve": ScreenCase(
        "doctor1", "/profile/appointments/{a}/approve", "/profile/appointments/{a}/approve"
    ),
    "appointment-offers": ScreenCase(
        "patient1", "/profile/appointments/{a}/offers", "/profile/appointments/{a}/offers", offers=True
    ),
    "chat": ScreenCase("doctor1", "/profile/messages/user-chat?appointment-id={a}", "/profile/messages/load-more"),
    "chat-threads": ScreenCase("support1", "/profile/messages/threads", "/profile/messages/threads"),
}


async def request(client: httpx.AsyncClient, method: str, path: str, headers: dict[str, str]) -> dict[str, Any]:
    response = await client.request(method, path, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@asynccontextmanager
async def restarted(settings, clock) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    """The service started again on the same database: a new process knows no one's screen."""
    app = create_app(settings, clock=clock)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield app.state.runtime, client


@pytest.mark.parametrize("name", list(SCREENS))
async def test_a_poll_alone_tells_a_restarted_service_the_clients_screen(
    client, login, demo, runtime, settings, clock, name
) -> None:
    case = SCREENS[name]
    put, poll = case.paths(demo)
    headers = {**(await login(case.user)).headers, "X-Client-Id": f"tab-{name}"}
    page = await request(client, "PUT", put, headers)
    known = runtime.hub.screen_of(f"tab-{name}")
    assert isinstance(known, Screen)
    assert (known.screen, known.poll) == (name, page["poll"])  # the routing's endpoint is the page's poll
    # An unchanged poll leaves presence as it was (not even set again).
    polled = await request(client, "PATCH", poll, {**headers, "X-Screen-State": page["state"]})
    assert polled["patches"] == [] and runtime.hub.screen_of(f"tab-{name}") is known

    async with restarted(settings, clock) as (fresh, again):
        assert fresh.hub.screen_of(f"tab-{name}") is None
        await request(again, "PATCH", poll, {**headers, "X-Screen-State": page["state"]})
        assert fresh.hub.screen_of(f"tab-{name}") == known


async def test_a_poll_does_not_replace_the_screen_the_client_opened_last(client, login, demo, runtime) -> None:
    """A client showing two screens (the web app's list with a chat panel beside it) keeps the last one opened."""
    headers = {**(await login("doctor1")).headers, "X-Client-Id": "two-screens"}
    listed = await request(client, "PUT", "/profile/appointments", headers)
    await request(client, "PUT", f"/profile/messages/user-chat?appointment-id={aid(demo, REQUESTED)}", headers)
    chat = runtime.hub.screen_of("two-screens")
    await request(client, "PATCH", "/profile/appointments", {**headers, "X-Screen-State": listed["state"]})
    assert runtime.hub.screen_of("two-screens") is chat


async def test_a_poll_tells_the_screen_when_the_client_id_was_anothers(client, login, runtime) -> None:
    """Presence belongs to the user who was shown the screen: another user's poll under that client id takes it."""
    doctor, support = await login("doctor1"), await login("support1")
    await request(client, "PUT", "/profile/appointments", {**doctor.headers, "X-Client-Id": "shared-tab"})
    await request(client, "PATCH", "/profile/messages/threads", {**support.headers, "X-Client-Id": "shared-tab"})
    known = runtime.hub.screen_of("shared-tab")
    assert known is not None and (known.user_id, known.screen) == (support.user["id"], "chat-threads")
