"""The answer to a send, appended to the sender's page or rendered again, is exactly the chat rendered fresh: over
random histories (others sending, some on a clock behind, reading and closing; the sender polling, loading older
messages, switching layout; time passing), every send's update set applied to the sender's page equals the page a
full render and diff gives at that moment, with the same content hash in its state token. On SQLite and
PostgreSQL."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.screens.protocol import apply
from doctordesk.services.chat import conversation_screen as conversation
from doctordesk.store.chat_tables import ChatMessage, ChatThread
from tests.support.chat import LOAD_MORE, open_chat, send, walk

STEPS = 160


@dataclass
class Open:
    """The sender's side: the page as the client holds it (patched by every answer) and its state token."""

    elements: list[dict[str, Any]]
    state: str
    layout: str = "desktop"
    checked: list[str] = field(default_factory=list)


def _content(state: str) -> str:
    """The content hash a state token names (the part before the chat's window suffix and the viewer's seal)."""
    return state.rsplit("~", 1)[0].split(".")[4]


async def _patch(client, who, url: str, view: Open) -> dict[str, Any]:
    headers = {**who.headers, "X-Screen-State": view.state, "X-Layout": view.layout}
    response = await client.patch(url, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


@contextlib.contextmanager
def rendering_only() -> Iterator[None]:
    """Polls render the whole chat (no answer appended to the client's page), for a fresh render to compare with."""
    appended = conversation._appended

    async def never(*_args: Any) -> None:
        return None

    conversation._appended = never  # type: ignore[assignment]
    try:
        yield
    finally:
        conversation._appended = appended


async def _fresh(client, who, view: Open) -> tuple[list[dict[str, Any]], str]:
    """The chat rendered now and diffed against the page the token names (the poll of a page that changed)."""
    with rendering_only():
        answer = await _patch(client, who, LOAD_MORE, view)
    return apply(view.elements, answer["patches"]), answer["state"]


async def _history(client, login, demo, runtime, clock, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    runtime.settings.chat_send_per_minute = 0
    runtime.settings.chat_page_size = 4
    people = {name: await login(name) for name in ("doctor1", "support1", "support2")}
    chats = [demo.appointments[i] for i in (0, 2, 6)]  # doctor1's: one without messages, two with the demo's
    sender_name = rng.choice(["doctor1", "support1"])
    sender = people[sender_name]
    others = [p for name, p in people.items() if name != sender_name]
    views: dict[int, Open] = {}
    counts = {"appended": 0, "rendered": 0}
    for a in chats:
        page = await open_chat(client, sender, a)
        views[a] = Open(page["elements"], page["state"])
    for step in range(STEPS):
        a = rng.choice(chats)
        view = views[a]
        roll = rng.random()
        if roll < 0.25:  # someone else writes, now and then on an instance whose clock is behind (or ahead)
            behind = timedelta(seconds=rng.choice([0, 0, 0, 2, -2]))
            clock.advance(-behind)
            assert (await send(client, rng.choice(others), a, f"other {step}")).status_code == 200
            clock.advance(behind)
        elif roll < 0.35:  # someone else reads (their poll marks what it shows) or closes the chat
            other = rng.choice(others)
            page = await open_chat(client, other, a)
            if rng.random() < 0.5:
                closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=other.headers)
                assert closed.status_code == 200
            else:
                await _patch(client, other, LOAD_MORE, Open(page["elements"], page["state"]))
        elif roll < 0.45:  # the sender's poll
            answer = await _patch(client, sender, LOAD_MORE, view)
            view.elements, view.state = apply(view.elements, answer["patches"]), answer["state"]
        elif roll < 0.5:  # older messages
            link = next((e for e in walk(view.elements) if e["id"] == "load-more"), None)
            if link is not None:
                answer = await _patch(client, sender, link["action"]["endpoint"], view)
                view.elements, view.state = apply(view.elements, answer["patches"]), answer["state"]
        elif roll < 0.53:  # the client shows the chat in the other layout from now on
            view.layout = "mobile" if view.layout == "desktop" else "desktop"
        else:  # the sender writes: the case under test
            before, answers = Open(view.elements, view.state, view.layout), _answers(runtime)
            response = await send(
                client, sender, a, f"mine {step}", headers={"X-Layout": view.layout}, state=view.state
            )
            assert response.status_code == 200, response.text
            answer = response.json()
            assert answer["patches"][-2:] == [
                {"op": "update", "id": "content", "set": {"value": ""}},
                {"op": "update", "id": "upload", "set": {"value": None}},
            ]
            view.elements, view.state = apply(view.elements, answer["patches"]), answer["state"]
            fresh, fresh_state = await _fresh(client, sender, before)
            assert view.elements == fresh
            assert _content(view.state) == _content(fresh_state)
            assert view.state.rsplit("~", 1)[1] == fresh_state.rsplit("~", 1)[1]  # the same window
            how = "appended" if _answers(runtime)["appended"] > answers["appended"] else "rendered"
            counts[how] += 1
        if rng.random() < 0.2:
            # Now and then past the safety net: the page is too old to build on, the chat renders again.
            clock.advance(timedelta(seconds=rng.choice([0, 1, 1, 2, runtime.settings.screen_max_age_seconds + 1])))
    return counts


def _answers(runtime) -> dict[str, int]:
    counts = {"appended": 0, "rendered": 0}
    for metric in runtime.metrics.chat_send_answers.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                counts[sample.labels["how"]] = int(sample.value)
    return counts


@pytest.mark.parametrize("seed", [20261124, 7, 1999])
async def test_every_answer_to_a_send_is_the_chat_rendered_fresh(client, login, demo, runtime, clock, seed):
    counts = await _history(client, login, demo, runtime, clock, seed=seed)
    # Both ways were taken (others' messages since the page, another layout and age make the chat render again).
    assert counts["appended"] >= 20 and counts["rendered"] >= 10, counts


async def _send(client, who, a, view: Open) -> dict[str, Any]:
    response = await send(client, who, a, "hello", state=view.state)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    view.elements, view.state = apply(view.elements, answer["patches"]), answer["state"]
    return answer


async def test_a_send_answers_by_appending_to_the_senders_current_page(client, login, demo, runtime):
    runtime.settings.chat_send_per_minute = 0
    doctor, support = await login("doctor1"), await login("support1")
    a = demo.appointments[2]  # the demo's thread: support's last three unread for the doctor
    page = await open_chat(client, doctor, a)
    view = Open(page["elements"], page["state"])
    unread = [e["id"] for e in walk(view.elements) if e["type"] == "Group" and e["props"]["read"] is False]
    assert len(unread) == 3
    answer = await _send(client, doctor, a, view)
    assert _answers(runtime) == {"appended": 1, "rendered": 0}
    ops = [(p["op"], p.get("id") or p["element"]["id"]) for p in answer["patches"][:-2]]
    mine = [e["id"] for e in walk(view.elements) if e["type"] == "Group"][-1]
    spacer = "spacer~" + mine.removeprefix("outgoing-")
    assert ops == [*(("update", i) for i in unread), ("add", spacer), ("add", mine)]
    # Support reads the chat: the next send's answer marks the doctor's message read, still appended.
    closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=support.headers)
    assert closed.status_code == 200
    answer = await _send(client, doctor, a, view)
    assert _answers(runtime) == {"appended": 2, "rendered": 0}
    assert answer["patches"][0] == {"op": "update", "id": mine, "set": {"props": {**_props(view, mine)}}}
    assert _props(view, mine)["read"] is True
    # Support writes: the next answer appends support's message, then the doctor's.
    await send(client, support, a, "from support")  # (without a state token: rendered)
    answer = await _send(client, doctor, a, view)
    assert _answers(runtime) == {"appended": 3, "rendered": 1}
    assert [
        p["element"]["value"] for p in answer["patches"] if p["op"] == "add" and p["element"]["type"] == "Group"
    ] == [
        "from support",
        "hello",
    ]
    assert [e["value"] for e in walk(view.elements) if e["type"] == "Group"][-3:] == ["hello", "from support", "hello"]


async def test_a_message_written_into_the_shown_window_since_makes_the_chat_render_again(
    client, login, demo, runtime, clock
):
    """A message that another writer put between messages the doctor's page shows (sends never do: their time is
    never before the thread's newest) is not missed: the count of the shown window tells, the chat renders."""
    runtime.settings.chat_send_per_minute = 0
    doctor = await login("doctor1")
    a = demo.appointments[0]
    page = await open_chat(client, doctor, a)
    view = Open(page["elements"], page["state"])
    for _ in range(3):
        clock.advance(timedelta(seconds=1))
        await _send(client, doctor, a, view)
    before = Open(view.elements, view.state)
    async with runtime.db.transaction() as session:
        thread = await session.scalar(select(ChatThread).where(ChatThread.appointment_id == a))
        late = ChatMessage(
            thread_id=thread.id,
            sender_id=demo.users["support1"],
            content="late",
            created_at=clock.now() - timedelta(milliseconds=1500),
        )
        session.add(late)
        await session.flush()
        thread.last_message_id = late.id
    counts = _answers(runtime)
    await _send(client, doctor, a, view)
    assert _answers(runtime) == {"appended": counts["appended"], "rendered": counts["rendered"] + 1}
    assert [e["value"] for e in walk(view.elements) if e["type"] == "Group"] == [
        "hello",
        "late",
        "hello",
        "hello",
        "hello",
    ]
    fresh, _ = await _fresh(client, doctor, before)
    assert view.elements == fresh


def _props(view: Open, element_id: str) -> dict[str, Any]:
    props: dict[str, Any] = next(e for e in walk(view.elements) if e["id"] == element_id)["props"]
    return props


async def test_a_page_older_than_the_screens_maximum_age_is_rendered_again(client, login, demo, runtime, clock):
    doctor = await login("doctor1")
    a = demo.appointments[0]
    page = await open_chat(client, doctor, a)
    view = Open(page["elements"], page["state"])
    await _send(client, doctor, a, view)
    clock.advance(timedelta(seconds=runtime.settings.screen_max_age_seconds))
    await _send(client, doctor, a, view)
    assert _answers(runtime) == {"appended": 1, "rendered": 1}
    await _send(client, doctor, a, view)  # the rendered page is young again
    assert _answers(runtime) == {"appended": 2, "rendered": 1}
