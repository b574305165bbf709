"""The answer to a send built from the sender's page (``screens.chat_append``) is exactly what rendering the whole chat
again and diffing it gives: for random histories, read positions, markers, viewers and layouts, the patches equal
the diff, applied to the old page they give the fresh page, and the new page (and its hash) is the fresh one. Where
the old page is not what the shortcut assumes, there is no shortcut."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctordesk.domain.chat import AttachmentView, Cursor, MessageView
from doctordesk.domain.roles import Actor, Role
from doctordesk.screens import chat
from doctordesk.screens.chat_append import Window, append_sent
from doctordesk.screens.protocol import apply, content_hash, diff
from tests.unit.screens.test_chat import DOCTOR, SUPPORT, T0, appointment

SUPPORT_2 = Actor(11, "support2", Role.SUPPORT, "Kim")
PEOPLE = (DOCTOR, SUPPORT, SUPPORT_2)


def _message(i: int, sender: Actor, minute: int, file: bool) -> MessageView:
    attachment = AttachmentView(500 + i, f"scan-{i}.png", "image/png", 99) if file else None
    return MessageView(
        i, sender.user_id, sender.display_name, sender.role, f"text {i}", T0 + timedelta(minutes=minute), attachment
    )


def _position(messages: tuple[MessageView, ...], index: int | None) -> Cursor | None:
    return messages[index].cursor if index is not None and messages else None


@st.composite
def sends(draw: st.DrawFn) -> tuple[chat.ChatState, chat.ChatState, chat.ChatState, str]:
    """(the sender's page's state, the chat after the send, what the shortcut is given, layout)."""
    viewer = draw(st.sampled_from((DOCTOR, SUPPORT)))
    count = draw(st.integers(0, 12))
    minutes = sorted(draw(st.lists(st.integers(0, 5), min_size=count, max_size=count)))  # equal times too
    history = tuple(
        _message(i + 1, draw(st.sampled_from(PEOPLE)), minute, draw(st.booleans())) for i, minute in enumerate(minutes)
    )
    last = len(history) - 1
    index = st.one_of(st.none(), st.integers(0, last)) if history else st.none()
    viewer_read, doctor_read, support_read = draw(index), draw(index), draw(index)
    marker = draw(st.one_of(st.none(), st.sampled_from([m.id for m in history]))) if history else None
    old = chat.ChatState(
        appointment=appointment(),
        viewer=viewer,
        messages=history,
        has_older=bool(history) and draw(st.booleans()),
        marker_id=marker,
        viewer_read=_position(history, viewer_read),
        doctor_read=_position(history, doctor_read),
        support_read=_position(history, support_read),
        can_write=True,
        max_chars=4000,
        max_upload_bytes=10,
    )
    sent = _message(count + 1, viewer, (minutes[-1] if minutes else 0) + draw(st.integers(0, 1)), draw(st.booleans()))
    # The sender's read position is the sent message; for a support agent, so is the furthest of all agents'.
    # The other side may have read further since the page was rendered.
    other_read = _position(history, draw(index))
    new = replace(
        old,
        messages=(*history, sent),
        viewer_read=sent.cursor,
        doctor_read=sent.cursor if viewer is DOCTOR else other_read,
        support_read=sent.cursor if viewer is not DOCTOR else other_read,
    )
    given_state = replace(new, messages=(sent,), has_older=False, marker_id=None)
    return old, new, given_state, draw(st.sampled_from(("desktop", "mobile")))


def _window(old: chat.ChatState) -> Window:
    ids = [m.id for m in old.messages]
    return Window(ids[0] if ids else None, old.marker_id, ids[-1] if ids else None, max_messages=5000)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sends())
def test_the_appended_answer_is_the_full_render_and_its_diff(case):
    old_state, new_state, given_state, layout = case
    old = chat.render(old_state, layout=layout, timeout=5).elements_json()
    fresh = chat.render(new_state, layout=layout, timeout=5)
    answer = append_sent(old, given_state, _window(old_state), layout=layout, timeout=5)
    assert answer is not None
    assert answer.patches == diff(old, fresh.elements_json())
    assert apply(old, answer.patches) == fresh.elements_json()
    assert answer.elements == fresh.elements_json() and answer.title == fresh.title
    assert content_hash(chat.SCREEN, answer.title, chat.LOAD_MORE_ENDPOINT, answer.elements) == fresh.content_hash()


def _case(viewer: Actor = DOCTOR, layout: str = "desktop"):
    history = tuple(_message(i, PEOPLE[i % 3], i, i == 2) for i in range(1, 6))
    old = chat.ChatState(
        appointment=appointment(),
        viewer=viewer,
        messages=history,
        has_older=True,
        marker_id=4,
        viewer_read=history[1].cursor,
        doctor_read=None,
        support_read=None,
        can_write=True,
        max_chars=4000,
        max_upload_bytes=10,
    )
    sent = _message(6, viewer, 9, False)
    given_state = replace(old, messages=(sent,), has_older=False, marker_id=None, viewer_read=sent.cursor)
    return chat.render(old, layout=layout, timeout=5).elements_json(), old, given_state


def test_the_old_page_is_left_as_it_was():
    old, old_state, given_state = _case()
    before = repr(old)
    assert append_sent(old, given_state, _window(old_state), layout="desktop", timeout=5) is not None
    assert repr(old) == before


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"previous_id": 4}, id="the thread's newest message is not the page's"),
        pytest.param({"previous_id": None}, id="the thread had no message"),
        pytest.param({"start_id": 2}, id="the window starts elsewhere"),
        pytest.param({"marker_id": 3}, id="the marker stands elsewhere"),
        pytest.param({"marker_id": None}, id="a marker the token does not name"),
        pytest.param({"max_messages": 5}, id="the window is full"),
    ],
)
def test_a_page_that_is_not_the_named_window_gets_no_shortcut(change):
    old, old_state, given_state = _case()
    window = replace(_window(old_state), **change)
    assert append_sent(old, given_state, window, layout="desktop", timeout=5) is None


def test_a_changed_frame_gets_no_shortcut():
    old, old_state, given_state = _case()
    window = _window(old_state)
    blocked = replace(given_state, can_write=False)
    assert append_sent(old, blocked, window, layout="desktop", timeout=5) is None
    assert append_sent(old, given_state, window, layout="mobile", timeout=5) is None  # another layout's page
    moved = replace(given_state, appointment=replace(appointment(), start=T0 + timedelta(days=9)))
    mobile, *_ = _case(layout="mobile")
    assert append_sent(mobile, moved, window, layout="mobile", timeout=5) is None  # the tag names the new time


def test_another_viewers_page_gets_no_shortcut():
    theirs, old_state, _ = _case(viewer=SUPPORT)
    _, _, mine = _case(viewer=SUPPORT_2)
    assert append_sent(theirs, mine, _window(old_state), layout="desktop", timeout=5) is None


def test_times_written_for_another_zone_get_no_shortcut():
    old, old_state, given_state = _case()
    elsewhere = replace(appointment(), location=replace(appointment().location, timezone="America/New_York"))
    moved = replace(given_state, appointment=elsewhere)
    assert append_sent(old, moved, _window(old_state), layout="desktop", timeout=5) is None


def test_a_message_sent_before_the_pages_newest_gets_no_shortcut():
    old, old_state, given_state = _case()
    (sent,) = given_state.messages
    early = replace(sent, created_at=old_state.messages[-1].created_at - timedelta(seconds=1))
    assert (
        append_sent(old, replace(given_state, messages=(early,)), _window(old_state), layout="desktop", timeout=5)
        is None
    )
