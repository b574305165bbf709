"""The poll lane (``ScreenStates``'s ``poll_renders``): at most that many polls of a process render at once, the
others wait their turn before rendering; a page (PUT) and an action's answer never wait for it; a poll that is
answered unchanged, or that shares a render under way, takes no turn."""

from __future__ import annotations

import asyncio

from doctordesk.bootstrap import poll_renders
from doctordesk.config import Settings
from doctordesk.screens.protocol import Page, UpdateSet, el
from doctordesk.screens.state import Revisions, ScreenStates, Shown, Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.store.db import default_pool_size

NOW = 1_800_000_000.0


class Gated:
    """A screen whose renders each wait until let through, so the test sees which renders have begun."""

    def __init__(self, name: str) -> None:
        self.shown = Shown(name, f"/{name}", (f"{name}:1",), repeatable=True)
        self.begun = 0  # renders begun since the last change
        self.made = 0  # renders finished, ever: what the page shows, so each render's page differs
        self.gate = asyncio.Event()
        self.gate.set()

    async def render(self) -> Page:
        self.begun += 1
        await self.gate.wait()
        self.made += 1
        return Page(
            screen=self.shown.screen,
            title=self.shown.screen,
            endpoint=self.shown.poll,
            poll=self.shown.poll,
            timeout=30,
            elements=(el("value", "Text", value=str(self.made)),),
        )

    def viewing(self, states: ScreenStates, viewer: Viewer, *, shares: object = None) -> Viewing:
        return Viewing(states, NOW, viewer, self.shown, 30, self.render, shares)  # type: ignore[arg-type]


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def _changed(states: ScreenStates, screens: list[Gated], viewers: list[Viewer]) -> list[str]:
    """Each viewer's page of its screen, then an event on every screen's topics: the tokens they poll with."""
    tokens = [(await s.viewing(states, v).page()).state for s, v in zip(screens, viewers, strict=True)]
    for screen in screens:
        states.revisions.bump(screen.shown.topics)
        screen.begun = 0
        screen.gate.clear()
    return tokens


async def _polling(states: ScreenStates, count: int) -> tuple[list[Gated], list[asyncio.Task[UpdateSet]]]:
    """``count`` screens of as many viewers, each changed since its page, and each viewer's poll started."""
    screens = [Gated(f"s{i}") for i in range(count)]
    viewers = [Viewer(f"c{i}", i, "doctor") for i in range(count)]
    tokens = await _changed(states, screens, viewers)
    polls = [
        asyncio.create_task(s.viewing(states, v).poll(t)) for s, v, t in zip(screens, viewers, tokens, strict=True)
    ]
    await _settle()
    return screens, polls


async def test_polls_past_the_lanes_width_wait_their_turn_and_all_are_answered() -> None:
    waited: list[int] = []
    states = ScreenStates(Revisions(), poll_renders=2)
    states.on_lane_wait = lambda: waited.append(1)
    screens, polls = await _polling(states, 4)
    assert [s.begun for s in screens] == [1, 1, 0, 0]  # two render, two wait before reading anything
    assert len(waited) == 2
    screens[0].gate.set()
    await _settle()
    assert screens[2].begun == 1 and screens[3].begun == 0  # the first done: the third's turn
    for screen in screens:
        screen.gate.set()
    answers = await asyncio.gather(*polls)
    assert all(a.patches for a in answers)  # each rendered its own fresh page
    assert [s.begun for s in screens] == [1, 1, 1, 1]


async def test_a_page_and_an_actions_answer_do_not_wait_for_the_lane() -> None:
    states = ScreenStates(Revisions(), poll_renders=1)
    busy, other = Gated("busy"), Gated("other")
    viewer = Viewer("c", 1, "doctor")
    (token,) = await _changed(states, [busy], [viewer])
    poll = asyncio.create_task(busy.viewing(states, viewer).poll(token))
    await _settle()
    assert busy.begun == 1  # the one turn is taken
    page = await other.viewing(states, viewer).page()
    refreshed = await other.viewing(states, viewer).refresh(page.state)
    assert page.screen == "other" and refreshed.screen == "other"
    busy.gate.set()
    assert (await poll).patches


async def test_an_unchanged_poll_and_a_shared_render_take_no_turn() -> None:
    states = ScreenStates(Revisions(), poll_renders=1)
    screen = Gated("list")
    tab_1, tab_2 = Viewer("tab-1", 7, "doctor"), Viewer("tab-2", 7, "doctor")
    first = (await screen.viewing(states, tab_1, shares="inputs").page()).state
    second = (await screen.viewing(states, tab_2, shares="inputs").page()).state
    unchanged = await screen.viewing(states, tab_1, shares="inputs").poll(first)
    assert unchanged.patches == [] and unchanged.state == first
    states.revisions.bump(screen.shown.topics)
    screen.begun = 0
    screen.gate.clear()
    a = asyncio.create_task(screen.viewing(states, tab_1, shares="inputs").poll(first))
    b = asyncio.create_task(screen.viewing(states, tab_2, shares="inputs").poll(second))
    await _settle()
    assert screen.begun == 1  # the second client waits for the first's render, not for a turn of its own
    screen.gate.set()
    answers = await asyncio.gather(a, b)
    assert screen.begun == 1 and answers[0].state == answers[1].state


async def test_without_a_width_polls_render_side_by_side() -> None:
    states = ScreenStates(Revisions())
    screens, polls = await _polling(states, 3)
    assert [s.begun for s in screens] == [1, 1, 1]
    for screen in screens:
        screen.gate.set()
    await asyncio.gather(*polls)


def test_the_lanes_width_is_the_setting_else_half_the_database_pool() -> None:
    assert poll_renders(Settings(poll_renders=3, db_pool_size=20)) == 3
    assert poll_renders(Settings(db_pool_size=8)) == 4
    assert poll_renders(Settings(db_pool_size=2)) == 2  # never fewer than two
    assert poll_renders(Settings()) == max(2, default_pool_size() // 2)
