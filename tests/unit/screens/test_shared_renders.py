"""One render shared by the polls of one viewer's clients (devices, tabs) at the same revision of the screen's topics
(``ScreenStates.page``'s ``shares``): the same user in the same role, language and render inputs shares; another
user, another role, another language, other inputs, a newer revision, a page past its time edge, a page (PUT) and
an action's answer never do; each client's token stays sealed for its own viewer."""

from __future__ import annotations

import asyncio
import gc
import types
from datetime import UTC, datetime

import pytest

from doctordesk import i18n
from doctordesk.screens.protocol import Element, Page, apply, el
from doctordesk.screens.state import Revisions, ScreenStates, Shown, Viewer, lasting
from doctordesk.screens.viewing import Viewing

SHOWN = Shown("counter", "/counter", ("counter:1",), repeatable=True)
NOW = 1_800_000_000.0
TAB_1, TAB_2 = Viewer("tab-1", 7, "doctor"), Viewer("tab-2", 7, "doctor")
INPUTS = ("counter", "desktop")


class Counter:
    """A screen showing one number (and who asked, so a page shared with the wrong viewer would show it)."""

    def __init__(self) -> None:
        self.value = 0
        self.renders = 0
        self.edge: datetime | None = None

    def render_for(self, viewer: Viewer) -> object:
        async def render() -> Page:
            self.renders += 1
            page = Page(
                screen=SHOWN.screen,
                title="Counter",
                endpoint="/counter",
                poll=SHOWN.poll,
                timeout=30,
                elements=(el("value", "Text", value=self.value), el("who", "Text", value=viewer.bound_to)),
            )
            return lasting(page, self.edge)

        return render


def viewing(
    states: ScreenStates, counter: Counter, viewer: Viewer, *, now: float = NOW, inputs: object = INPUTS
) -> Viewing:
    return Viewing(states, now, viewer, SHOWN, 30, counter.render_for(viewer), inputs)  # type: ignore[arg-type]


async def opened_then_changed(states: ScreenStates, counter: Counter, *viewers: Viewer) -> list[Page]:
    """Each viewer's page, then a change of the topics: the pages the viewers poll from."""
    pages = [await viewing(states, counter, v).page() for v in viewers]
    counter.value += 1
    states.revisions.bump(SHOWN.topics)
    counter.renders = 0
    return pages


async def test_the_same_viewers_two_clients_share_one_render_and_each_gets_the_fresh_pages_patches() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    a = await viewing(states, counter, TAB_1, now=NOW + 1).poll(first.state)
    b = await viewing(states, counter, TAB_2, now=NOW + 2).poll(second.state)
    assert counter.renders == 1
    assert a.state == b.state  # one viewer (user and role): one seal
    fresh = await viewing(states, counter, TAB_2, now=NOW + 2).page()
    assert apply(first.elements_json(), a.patches) == fresh.elements_json()
    assert apply(second.elements_json(), b.patches) == fresh.elements_json()
    # The shared token is the viewer's own: its next poll is unchanged, from memory.
    again = await viewing(states, counter, TAB_2, now=NOW + 3).poll(b.state)
    assert again.patches == [] and again.state == b.state
    assert counter.renders == 2  # the render of the first poll and the PUT's


async def test_two_users_never_share_a_render() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    other_user = Viewer("tab-9", 8, "doctor")
    mine, theirs = await opened_then_changed(states, counter, TAB_1, other_user)
    a = await viewing(states, counter, TAB_1).poll(mine.state)
    b = await viewing(states, counter, other_user).poll(theirs.state)
    assert counter.renders == 2
    assert a.state != b.state
    shown = {e["id"]: e["value"] for e in apply(theirs.elements_json(), b.patches)}
    assert shown == {"value": 1, "who": "8:doctor"}
    assert states.read(b.state, other_user, SHOWN.topics) is not None
    assert states.read(b.state, TAB_1, SHOWN.topics) is None


async def test_one_user_in_two_roles_never_shares_a_render() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    as_support = Viewer("tab-2", 7, "support")
    mine, other_role = await opened_then_changed(states, counter, TAB_1, as_support)
    await viewing(states, counter, TAB_1).poll(mine.state)
    b = await viewing(states, counter, as_support).poll(other_role.state)
    assert counter.renders == 2
    assert states.read(b.state, as_support, SHOWN.topics) is not None
    assert states.read(b.state, TAB_1, SHOWN.topics) is None


async def test_other_render_inputs_or_another_language_render_again() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    await viewing(states, counter, TAB_1).poll(first.state)
    await viewing(states, counter, TAB_2, inputs=("counter", "mobile")).poll(second.state)
    assert counter.renders == 2
    i18n.use("de")
    try:
        await viewing(states, counter, TAB_2).poll(second.state)
    finally:
        i18n.use("en")
    assert counter.renders == 3


async def test_a_newer_revision_or_a_page_past_its_time_edge_renders_again() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    counter.edge = datetime.fromtimestamp(NOW + 60, UTC)
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    await viewing(states, counter, TAB_1).poll(first.state)
    states.revisions.bump(SHOWN.topics)
    await viewing(states, counter, TAB_2).poll(second.state)
    assert counter.renders == 2  # the render shared at the older revision is not handed out
    await viewing(states, counter, TAB_1, now=NOW + 61).poll(first.state)
    assert counter.renders == 3  # time alone changed the page: not shared past its edge


async def test_a_page_and_an_actions_answer_never_take_a_shared_render() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    await viewing(states, counter, TAB_1).poll(first.state)
    await viewing(states, counter, TAB_2).refresh(second.state)
    await viewing(states, counter, TAB_2).page()
    assert counter.renders == 3


async def test_without_inputs_a_screen_never_shares() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    await viewing(states, counter, TAB_1, inputs=None).poll(first.state)
    await viewing(states, counter, TAB_2, inputs=None).poll(second.state)
    assert counter.renders == 2


class Slow(Counter):
    """A render that waits until let go (``fail``: then raises instead of returning its page)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()
        self.fail = False

    def render_for(self, viewer: Viewer) -> object:
        fast = super().render_for(viewer)

        async def render() -> Page:
            self.renders += 1
            await self.go.wait()
            if self.fail:
                self.fail = False
                raise RuntimeError("the database went away")
            self.renders -= 1  # counted above
            return await fast()  # type: ignore[operator,no-any-return]

        return render


async def test_clients_polling_at_once_wait_for_the_one_render_under_way() -> None:
    states, counter = ScreenStates(Revisions()), Slow()
    counter.go.set()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    counter.go.clear()
    polls = [
        asyncio.create_task(viewing(states, counter, v).poll(p.state)) for v, p in ((TAB_1, first), (TAB_2, second))
    ]
    await asyncio.sleep(0)
    counter.go.set()
    a, b = await asyncio.gather(*polls)
    assert counter.renders == 1
    assert a.state == b.state and a.patches == b.patches != []


async def test_when_the_render_under_way_fails_or_is_cancelled_the_waiting_poll_renders_itself() -> None:
    for ending in ("fails", "cancelled"):
        states, counter = ScreenStates(Revisions()), Slow()
        counter.go.set()
        first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
        counter.go.clear()
        counter.fail = ending == "fails"
        doomed = asyncio.create_task(viewing(states, counter, TAB_1).poll(first.state))
        await asyncio.sleep(0)
        waiting = asyncio.create_task(viewing(states, counter, TAB_2).poll(second.state))
        await asyncio.sleep(0)
        if ending == "cancelled":
            doomed.cancel()
        counter.go.set()
        update = await waiting
        with pytest.raises((RuntimeError, asyncio.CancelledError)):
            await doomed
        fresh = await viewing(states, counter, TAB_2).page()
        assert apply(second.elements_json(), update.patches) == fresh.elements_json(), ending
        assert counter.renders == 3, ending  # the doomed one, the waiting poll's own, the PUT


def _reachable(root: object) -> list[object]:
    """Every object ``root`` holds, however deep, as the collector follows them (classes are not followed: they
    lead to whole modules)."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen[id(item)] = item
        stack.extend(r for r in gc.get_referents(item) if not isinstance(r, type | types.ModuleType))
    return list(seen.values())


async def test_a_kept_render_holds_its_pages_json_but_not_its_element_objects() -> None:
    states, counter = ScreenStates(Revisions()), Counter()
    first, second = await opened_then_changed(states, counter, TAB_1, TAB_2)
    await viewing(states, counter, TAB_1, now=NOW + 1).poll(first.state)
    kept = list(states.shared._pages.values())
    assert len(kept) == 1
    held = _reachable(kept)
    assert not [item for item in held if isinstance(item, Element)]
    # What the other client is answered from it is the rendered page's, patches and all.
    shared = await viewing(states, counter, TAB_2, now=NOW + 2).poll(second.state)
    fresh = await viewing(states, counter, TAB_2, now=NOW + 2).page()
    assert counter.renders == 2
    assert apply(second.elements_json(), shared.patches) == fresh.elements_json()


def test_a_page_as_its_json_alone_answers_as_the_page_does() -> None:
    page = Page(
        screen="counter",
        title="Counter",
        endpoint="/counter",
        poll="/counter",
        timeout=30,
        elements=(el("group", "Group", el("value", "Text", value=3)),),
        state="s",
    )
    kept = page.json_only()
    assert kept.elements == ()
    assert kept.to_json() == page.to_json()
    assert kept.content_hash() == page.content_hash()
