"""A chat's changed poll appended to the client's page (others wrote, read or closed since) is exactly the chat
rendered fresh: over random histories, every poll's update set applied to the viewer's page equals what a full
render and diff gives for the same token, with the same content hash. On SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from doctordesk.screens.protocol import apply
from doctordesk.services.chat import conversation_screen as conversation
from tests.integration.web.test_chat_send_answer import Open, _content, _patch, rendering_only
from tests.support.chat import LOAD_MORE, open_chat, send

STEPS = 50


@contextlib.contextmanager
def marking_nothing() -> Iterator[None]:
    """A poll that does not mark what it shows as read (the viewer's read position is on its page)."""
    marking = conversation._mark_viewed

    async def nothing(*_args: Any) -> None:
        return None

    conversation._mark_viewed = nothing  # type: ignore[assignment]
    try:
        yield
    finally:
        conversation._mark_viewed = marking


@pytest.mark.parametrize("seed", [11])
async def test_every_changed_poll_is_the_chat_rendered_fresh(client, login, demo, runtime, clock, seed):
    rng = random.Random(seed)
    runtime.settings.chat_send_per_minute = 0
    runtime.settings.chat_page_size = 4
    people = {name: await login(name) for name in ("doctor1", "support1", "support2")}
    viewer_name = rng.choice(["doctor1", "support1"])
    viewer = people[viewer_name]
    others = [p for name, p in people.items() if name != viewer_name]
    a = demo.appointments[2]
    page = await open_chat(client, viewer, a)
    view = Open(page["elements"], page["state"])
    appended = 0
    real = conversation._appended

    async def counted(*args: Any) -> Any:
        nonlocal appended
        answer = await real(*args)
        appended += answer is not None
        return answer

    conversation._appended = counted  # type: ignore[assignment]
    try:
        for step in range(STEPS):
            roll = rng.random()
            if roll < 0.45:
                assert (await send(client, rng.choice(others), a, f"other {step}")).status_code == 200
            elif roll < 0.55:  # someone else reads (opening marks what it shows) or closes the chat
                other = rng.choice(others)
                await open_chat(client, other, a)
                if rng.random() < 0.5:
                    closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=other.headers)
                    assert closed.status_code == 200
            elif roll < 0.62:  # the viewer writes
                sent = await send(client, viewer, a, f"mine {step}", state=view.state)
                assert sent.status_code == 200, sent.text
                view.elements, view.state = apply(view.elements, sent.json()["patches"]), sent.json()["state"]
            else:  # the viewer's poll, compared with a full render for the same token
                with rendering_only(), marking_nothing():  # the poll after it sees what it sees
                    fresh = await _patch(client, viewer, LOAD_MORE, view)
                answer = await _patch(client, viewer, LOAD_MORE, view)
                elements = apply(view.elements, answer["patches"])
                assert elements == apply(view.elements, fresh["patches"])
                assert _content(answer["state"]) == _content(fresh["state"])
                view.elements, view.state = elements, answer["state"]
            if rng.random() < 0.1:
                clock.advance(timedelta(seconds=rng.choice([1, 2, runtime.settings.screen_max_age_seconds + 1])))
    finally:
        conversation._appended = real  # type: ignore[assignment]
    assert appended >= 5, appended  # the polls did take the appended way
