"""A viewer's screen: the PUT's page, the poll (empty and without rendering when nothing changed) and an action's
refresh, and which of them tell the listeners (presence) what the viewer was shown."""

from __future__ import annotations

import pytest

from doctordesk.screens.protocol import Page, apply, el
from doctordesk.screens.state import Revisions, ScreenStates, Shown, Token, Viewer
from doctordesk.screens.viewing import Viewing

SHOWN = Shown("counter", "/counter", ("counter:1",))
VIEWER = Viewer("tab-1", 7, "doctor")
NOW = 1_800_000_000.0


class Counter:
    """A screen showing one number; counts its renders."""

    def __init__(self) -> None:
        self.value = 0
        self.renders = 0

    async def render(self) -> Page:
        self.renders += 1
        return Page(
            screen=SHOWN.screen,
            title="Counter",
            endpoint="/counter",
            poll=SHOWN.poll,
            timeout=30,
            elements=(el("value", "Text", value=self.value),),
        )


def setup() -> tuple[ScreenStates, Counter, list[tuple[Viewer, Shown, bool]]]:
    states = ScreenStates(Revisions())
    told: list[tuple[Viewer, Shown, bool]] = []

    def listener(viewer: Viewer, shown: Shown, *, opened: bool) -> None:
        told.append((viewer, shown, opened))

    states.listeners.append(listener)
    return states, Counter(), told


def viewing(states: ScreenStates, counter: Counter, now: float = NOW) -> Viewing:
    return Viewing(states, now, VIEWER, SHOWN, 30, counter.render)


async def test_the_page_has_a_state_token_and_tells_the_listeners_what_the_viewer_sees() -> None:
    states, counter, told = setup()
    page = await viewing(states, counter).page()
    assert page.state and counter.renders == 1
    assert told == [(VIEWER, SHOWN, True)]


async def test_an_unchanged_poll_renders_nothing_answers_empty_and_still_tells_the_listeners() -> None:
    states, counter, told = setup()
    page = await viewing(states, counter).page()
    update = await viewing(states, counter, NOW + 5).poll(page.state)
    assert (update.screen, update.state, update.timeout, update.patches) == ("counter", page.state, 30, [])
    assert counter.renders == 1
    assert told == [(VIEWER, SHOWN, True), (VIEWER, SHOWN, False)]


async def test_a_poll_after_a_change_of_its_topics_brings_the_patches_to_the_fresh_page() -> None:
    states, counter, told = setup()
    page = await viewing(states, counter).page()
    counter.value = 1
    states.revisions.bump(SHOWN.topics)
    update = await viewing(states, counter).poll(page.state)
    fresh = await viewing(states, counter).page()
    assert apply(page.elements_json(), update.patches) == fresh.elements_json()
    assert update.state.split(".")[4] == fresh.state.split(".")[4]
    assert [opened for _, _, opened in told] == [True, False, True]


async def test_an_actions_refresh_renders_but_does_not_move_presence() -> None:
    states, counter, told = setup()
    page = await viewing(states, counter).page()
    counter.value = 2
    update = await viewing(states, counter).refresh(page.state)
    assert [p["op"] for p in update.patches] == ["update"] and counter.renders == 2
    assert told == [(VIEWER, SHOWN, True)]


async def test_a_poll_that_fails_to_render_tells_no_one() -> None:
    states, _counter, told = setup()

    async def gone() -> Page:
        raise LookupError("no longer visible")

    with pytest.raises(LookupError):
        await Viewing(states, NOW, VIEWER, SHOWN, 30, gone).poll(None)
    assert told == []


@pytest.mark.parametrize(
    "replayer",
    [Viewer("tab-1", 8, "doctor"), Viewer("tab-1", 7, "support"), Viewer("tab-1", 7, "admin")],
    ids=["another-user", "same-user-another-role", "same-user-admin"],
)
async def test_a_token_issued_to_another_viewer_re_renders_and_resets(replayer):
    states, counter, _ = setup()
    page = await viewing(states, counter).page()
    other = Viewing(states, NOW, replayer, SHOWN, 30, counter.render)
    assert not states.unchanged(page.state, SHOWN.topics, NOW, viewer=replayer)
    assert states.read(page.state, replayer, SHOWN.topics) is None
    assert states.cached(page.state, replayer, SHOWN.topics) is None
    update = await other.poll(page.state)
    assert [p["op"] for p in update.patches] == ["reset"] and counter.renders == 2
    # The same viewer through another client (tab) is the same viewer: the token holds.
    assert states.unchanged(page.state, SHOWN.topics, NOW, viewer=Viewer("tab-2", 7, "doctor"))


@pytest.mark.parametrize("part", range(7))
async def test_a_token_with_any_part_changed_is_no_token(part):
    states, counter, _ = setup()
    page = await viewing(states, counter).page()
    parts = page.state.split(".")
    parts[part] = "1" + parts[part][1:] if parts[part][:1] != "1" else "2" + parts[part][1:]
    forged = ".".join(parts)
    assert states.read(forged, VIEWER, SHOWN.topics) is None
    assert not states.unchanged(forged, SHOWN.topics, NOW, viewer=VIEWER)


async def test_a_page_made_from_another_vouches_for_the_actions_own_events_only_when_nothing_else_came() -> None:
    """``follow``: an action's answer built without a render (a chat send's appended message) shows the events the
    action published; its token is current only when they, and nothing else, were marked since the revision."""
    states, counter, _ = setup()
    page = await viewing(states, counter).page()
    token = Token.parse(page.state)
    assert token is not None

    def made(own_events: int, *others: str) -> str:
        revision = states.revision(SHOWN.topics)
        states.revisions.bump(SHOWN.topics)  # the action's own event
        for other in others:
            states.revisions.bump((other,))
        return states.follow(
            token, viewer=VIEWER, topics=SHOWN.topics, revision=revision, screen=SHOWN.screen, title="Counter",
            poll=SHOWN.poll, elements=[el("value", "Text", value=1).to_json()], own_events=own_events,
        )  # fmt: skip

    assert states.unchanged(made(1), SHOWN.topics, NOW, viewer=VIEWER)
    assert not states.unchanged(made(1, "elsewhere:2"), SHOWN.topics, NOW, viewer=VIEWER)  # another event between
    assert not states.unchanged(made(0), SHOWN.topics, NOW, viewer=VIEWER)  # the page does not claim to show it
