"""The chat brought up to date from the client's page (``screens.chat.append``) is exactly what rendering the whole
chat again and diffing it gives: for random histories (what the page shows, what others wrote since, the send),
read positions, markers, viewers and layouts, the patches equal the diff, applied to the old page they give the
fresh page, and the new page (and its hash) is the fresh one. Where the page is not what the shortcut assumes,
there is no shortcut."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctordesk.domain.chat.messages import AttachmentView, Cursor, MessageView
from doctordesk.domain.roles import Actor, Role
from doctordesk.screens.chat import screen as chat
from doctordesk.screens.chat.append import Shown, append, shown
from doctordesk.screens.hashing import content_hash, parts_of
from doctordesk.screens.protocol import apply, diff
from tests.unit.screens.chat.test_chat import DOCTOR, SUPPORT, T0, appointment

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
    """(the state the sender's page shows, the chat after the send, what ``append`` is given, layout): the page
    shows the first messages of a history, others (or the sender elsewhere) wrote the rest since, then the send."""
    viewer = draw(st.sampled_from((DOCTOR, SUPPORT)))
    count = draw(st.integers(0, 12))
    minutes = sorted(draw(st.lists(st.integers(0, 5), min_size=count, max_size=count)))  # equal times too
    history = tuple(
        _message(i + 1, draw(st.sampled_from(PEOPLE)), minute, draw(st.booleans())) for i, minute in enumerate(minutes)
    )
    seen = draw(st.integers(0, count))  # how many the page shows
    on_page = history[:seen]
    index = st.one_of(st.none(), st.integers(0, seen - 1)) if on_page else st.none()
    viewer_read, doctor_read, support_read = draw(index), draw(index), draw(index)
    marker = draw(st.one_of(st.none(), st.sampled_from([m.id for m in on_page]))) if on_page else None
    old = chat.ChatState(
        appointment=appointment(),
        viewer=viewer,
        messages=on_page,
        has_older=bool(on_page) and draw(st.booleans()),
        marker_id=marker,
        viewer_read=_position(on_page, viewer_read),
        doctor_read=_position(on_page, doctor_read),
        support_read=_position(on_page, support_read),
        can_write=True,
        max_chars=4000,
        max_upload_bytes=10,
    )
    sent = _message(count + 1, viewer, (minutes[-1] if minutes else 0) + draw(st.integers(0, 1)), draw(st.booleans()))
    # The sender's read position is the sent message; for a support agent, so is the furthest of all agents'.
    # The other side may have read further since the page was rendered.
    later = st.one_of(st.none(), st.integers(0, count - 1)) if history else st.none()
    other_read = _position(history, draw(later))
    new = replace(
        old,
        messages=(*history, sent),
        viewer_read=sent.cursor,
        doctor_read=sent.cursor if viewer is DOCTOR else other_read,
        support_read=sent.cursor if viewer is not DOCTOR else other_read,
    )
    given_state = replace(new, messages=(*history[seen:], sent), has_older=False)
    return old, new, given_state, draw(st.sampled_from(("desktop", "mobile")))


def _shown(page, old: chat.ChatState) -> Shown:
    found = shown(page, start_id=old.messages[0].id if old.messages else None, marker_id=old.marker_id)
    assert found is not None
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sends())
def test_the_appended_answer_is_the_full_render_and_its_diff(case):
    old_state, new_state, given_state, layout = case
    old = chat.render(old_state, layout=layout, timeout=5).elements_json()
    fresh = chat.render(new_state, layout=layout, timeout=5)
    answer = append(_shown(old, old_state), given_state, layout=layout, timeout=5, max_messages=5000)
    assert answer is not None
    assert answer.patches == diff(old, fresh.elements_json())
    assert apply(old, answer.patches) == fresh.elements_json()
    assert answer.elements == fresh.elements_json() and answer.title == fresh.title
    assert content_hash(chat.SCREEN, answer.title, chat.LOAD_MORE_ENDPOINT, answer.elements) == fresh.content_hash()
    parts = parts_of(answer.messages, None)  # as the next answer's hash takes them
    hashed = content_hash(chat.SCREEN, answer.title, chat.LOAD_MORE_ENDPOINT, answer.elements, parts=parts)
    assert hashed == fresh.content_hash()


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
    given_state = replace(old, messages=(sent,), has_older=False, viewer_read=sent.cursor)
    return chat.render(old, layout=layout, timeout=5).elements_json(), old, given_state


def test_the_old_page_is_left_as_it_was():
    old, old_state, given_state = _case()
    before = repr(old)
    assert append(_shown(old, old_state), given_state, layout="desktop", timeout=5, max_messages=5000) is not None
    assert repr(old) == before


@pytest.mark.parametrize(
    ("start_id", "marker_id"),
    [
        pytest.param(2, 4, id="the window starts elsewhere"),
        pytest.param(None, 4, id="a window of no message"),
        pytest.param(1, 3, id="the marker stands elsewhere"),
        pytest.param(1, None, id="a marker the token does not name"),
    ],
)
def test_a_page_that_is_not_the_named_window_is_not_read(start_id, marker_id):
    old, _, _ = _case()
    assert shown(old, start_id=1, marker_id=4) is not None
    assert shown(old, start_id=start_id, marker_id=marker_id) is None


def test_a_marker_for_a_message_not_shown_is_no_marker():
    old, old_state, _ = _case()
    unmarked = chat.render(replace(old_state, marker_id=None), layout="desktop", timeout=5).elements_json()
    assert shown(unmarked, start_id=1, marker_id=9) is not None  # a render puts no marker
    assert shown(old, start_id=1, marker_id=9) is None


def test_a_window_that_would_drop_its_oldest_gets_no_shortcut():
    old, old_state, given_state = _case()
    assert append(_shown(old, old_state), given_state, layout="desktop", timeout=5, max_messages=6) is not None
    assert append(_shown(old, old_state), given_state, layout="desktop", timeout=5, max_messages=5) is None


def test_a_changed_frame_gets_no_shortcut():
    old, old_state, given_state = _case()
    page = _shown(old, old_state)
    assert append(page, given_state, layout="desktop", timeout=5, max_messages=99) is not None
    assert append(page, replace(given_state, can_write=False), layout="desktop", timeout=5, max_messages=99) is None
    assert append(page, given_state, layout="mobile", timeout=5, max_messages=99) is None  # another layout's page
    mobile, *_ = _case(layout="mobile")
    moved = replace(given_state, appointment=replace(appointment(), start=T0 + timedelta(days=9)))
    assert append(_shown(mobile, old_state), given_state, layout="mobile", timeout=5, max_messages=99) is not None
    assert append(_shown(mobile, old_state), moved, layout="mobile", timeout=5, max_messages=99) is None


def test_another_viewers_page_gets_no_shortcut():
    theirs, old_state, _ = _case(viewer=SUPPORT)
    _, _, mine = _case(viewer=SUPPORT_2)
    assert append(_shown(theirs, old_state), mine, layout="desktop", timeout=5, max_messages=99) is None


def test_times_written_for_another_zone_get_no_shortcut():
    old, old_state, given_state = _case()
    elsewhere = replace(appointment(), location=replace(appointment().location, timezone="America/New_York"))
    moved = replace(given_state, appointment=elsewhere)
    assert append(_shown(old, old_state), moved, layout="desktop", timeout=5, max_messages=99) is None


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"created_at": T0 + timedelta(minutes=5, seconds=-1)}, id="written before the page's newest"),
        pytest.param({"id": 3}, id="a message the page shows"),
    ],
)
def test_newer_messages_that_are_not_after_the_page_get_no_shortcut(change):
    old, old_state, given_state = _case()
    (sent,) = given_state.messages
    odd = replace(given_state, messages=(replace(sent, **change),))
    assert append(_shown(old, old_state), odd, layout="desktop", timeout=5, max_messages=99) is None


def test_a_marker_naming_a_newer_message_gets_no_shortcut():
    _, old_state, given_state = _case()
    unmarked = chat.render(replace(old_state, marker_id=None), layout="desktop", timeout=5).elements_json()
    page = shown(unmarked, start_id=1, marker_id=6)  # a token naming the message about to be sent
    assert page is not None
    assert append(page, replace(given_state, marker_id=None), layout="desktop", timeout=5, max_messages=99) is not None
    assert append(page, replace(given_state, marker_id=6), layout="desktop", timeout=5, max_messages=99) is None
