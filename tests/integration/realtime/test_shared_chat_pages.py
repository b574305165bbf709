"""A chat page one process handed out is found by another on the same bus (services/chat/shared_pages_screen.py): the
page a state token names, for that user and chat only, and only when it is the page the token names. Over a real
Unix socket and broker and over Redis, in this process."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from doctordesk.domain.roles import Actor, Role
from doctordesk.realtime.metrics import Metrics
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import Page, el
from doctordesk.screens.state import ScreenStates, Token, current_client
from doctordesk.services.chat import shared_pages_screen as shared_pages
from tests.integration.realtime.test_shared_screen_state import NOW, TOPICS, VIEWER, broker, two  # noqa: F401

DOCTOR = Actor(7, "doctor7", Role.DOCTOR, "Doctor Seven")
OTHER = Actor(8, "doctor8", Role.DOCTOR, "Doctor Eight")
CHAT = 41


def runtime(bus: Any, states: ScreenStates) -> Runtime:
    settings = SimpleNamespace(screen_max_age_seconds=60)
    return cast(Runtime, SimpleNamespace(bus=bus, screens=states, settings=settings, metrics=Metrics()))


async def handed(states: ScreenStates, text: str) -> Token:
    async def render() -> Page:
        return Page("chat", "Chat", "/c", "/c", 30, (el("thread", "Group", el("m", "Text", value=text)),))

    token = Token.parse((await states.page(TOPICS, NOW, render, viewer=VIEWER)).state)
    assert token is not None
    return token


async def test_a_page_one_process_handed_out_is_built_on_by_the_other(two) -> None:  # noqa: F811
    (bus1, states1), (bus2, states2) = two
    token = await handed(states1, "hello")
    await shared_pages.keep(runtime(bus1, states1), DOCTOR, CHAT, token)
    assert states2.cache.entry(token.content) is None
    rt2 = runtime(bus2, states2)
    await shared_pages.fetch(rt2, DOCTOR, CHAT, token)
    assert states2.cache.get(token.content) == states1.cache.get(token.content)
    assert rt2.metrics.chat_pages_from_bus._value.get() == 1  # type: ignore[attr-defined]


async def test_only_the_page_the_token_names_for_that_user_and_chat_is_taken(two) -> None:  # noqa: F811
    (bus1, states1), (bus2, states2) = two
    older, newer = await handed(states1, "one"), await handed(states1, "two")
    await shared_pages.keep(runtime(bus1, states1), DOCTOR, CHAT, newer)
    rt2 = runtime(bus2, states2)
    await shared_pages.fetch(rt2, DOCTOR, CHAT, older)  # the bus holds a later page of that chat
    await shared_pages.fetch(rt2, OTHER, CHAT, newer)  # another user's
    await shared_pages.fetch(rt2, DOCTOR, CHAT + 1, newer)  # another chat's
    assert states2.cache.entry(older.content) is None and states2.cache.entry(newer.content) is None
    await shared_pages.fetch(rt2, DOCTOR, CHAT, newer)
    assert states2.cache.get(newer.content) == states1.cache.get(newer.content)


async def test_two_clients_of_one_user_on_one_chat_each_find_their_own_page(two) -> None:  # noqa: F811
    (bus1, states1), (bus2, states2) = two
    tab, phone = await handed(states1, "the tab's page"), await handed(states1, "the phone's page")
    rt1, rt2 = runtime(bus1, states1), runtime(bus2, states2)
    for client, token in (("tab", tab), ("phone", phone)):  # each answer keeps its client's page
        current_client.set(client)
        await shared_pages.keep(rt1, DOCTOR, CHAT, token)
    for client, token in (("tab", tab), ("phone", phone)):  # the phone's page did not replace the tab's
        current_client.set(client)
        await shared_pages.fetch(rt2, DOCTOR, CHAT, token)
        assert states2.cache.get(token.content) == states1.cache.get(token.content)
    current_client.set(None)
