from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView, Party, Place
from doctordesk.domain.chat.messages import AttachmentView, Cursor, MessageView
from doctordesk.domain.roles import Actor, Role
from doctordesk.screens.chat import screen as chat
from tests.support.chat import ids, walk

T0 = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
DOCTOR = Actor(1, "doctor1", Role.DOCTOR, "Dr. Anna Berger")
SUPPORT = Actor(10, "support1", Role.SUPPORT, "Sam")


def appointment(chat_enabled: bool = True) -> AppointmentView:
    return AppointmentView(
        id=7,
        status=Status.REQUESTED,
        start=T0 + timedelta(days=2),
        duration_minutes=30,
        doctor=Party(1, "Dr. Anna Berger"),
        location=Place(1, "Berlin", "Europe/Berlin"),
        patient=Party(5, "Maria"),
        service="consultation",
        chat_enabled=chat_enabled,
        disclaimer_required=False,
        prescription_needed=False,
        version=1,
        updated_at=T0,
    )


def message(i: int, sender: Actor, *, file: bool = False) -> MessageView:
    attachment = AttachmentView(100 + i, f"report-{i}.pdf", "application/pdf", 1234) if file else None
    return MessageView(
        i, sender.user_id, sender.display_name, sender.role, f"text {i}", T0 + timedelta(minutes=i), attachment
    )


def state(
    viewer: Actor = DOCTOR,
    *,
    has_older: bool = True,
    marker: int | None = 3,
    enabled: bool = True,
    can_write: bool = True,
) -> chat.ChatState:
    msgs = (message(1, SUPPORT, file=True), message(2, DOCTOR, file=True), message(3, SUPPORT), message(4, SUPPORT))
    return chat.ChatState(
        appointment=appointment(enabled),
        viewer=viewer,
        messages=msgs,
        has_older=has_older,
        marker_id=marker,
        viewer_read=Cursor(msgs[1].created_at, 2),
        doctor_read=Cursor(msgs[1].created_at, 2),
        support_read=Cursor(msgs[1].created_at, 2),
        can_write=can_write,
        max_chars=4000,
        max_upload_bytes=10,
    )


def refs(page) -> list[str]:
    return [e["ref"] for e in walk(page.elements_json())]


SPEC_ORDER_BODY = [
    "spacer",
    "load-more",
    "incoming-1",
    "attachmentViewer",
    "spacer",
    "outgoing-2",
    "attachmentViewer",
    "new-message-line",
    "new-message",
    "new-message-line",
    "incoming-3",
    "incoming-4",
    "newer-messages-marker",
    "line",
    "content",
    "upload",
    "send",
]


def test_desktop_page_has_the_elements_of_2_3_1_in_order():
    page = chat.render(state(), layout="desktop", timeout=5)
    assert page.title.startswith(f"Chat · {state().appointment.patient.name}, ") and "#" not in page.title
    assert refs(page)[:2] == ["spacer", "close"]
    assert [r for r in refs(page)[2:] if r != "appointment-id"] == SPEC_ORDER_BODY
    assert "tag" not in refs(page) and "scroll" not in refs(page)


def test_mobile_page_has_the_elements_of_2_3_1_in_order():
    page = chat.render(state(), layout="mobile", timeout=5)
    assert refs(page)[:2] == ["tag", "scroll"]
    assert [r for r in refs(page)[2:] if r != "appointment-id"] == SPEC_ORDER_BODY
    tag = page.elements_json()[0]
    assert tag["label"] == "Appointment #7"  # the spec's label naming the appointment id
    assert tag["value"].startswith(state().appointment.patient.name + ", ")  # and whom and when it is about
    scroll = page.elements_json()[1]
    assert scroll["children"][0]["id"] == "spacer"
    assert "close" not in refs(page)


@pytest.mark.parametrize("layout", ["desktop", "mobile"])
def test_ids_are_unique_where_the_spec_reuses_a_reference(layout):
    page = chat.render(state(), layout=layout, timeout=5)
    all_ids = ids(page.elements_json())
    assert len(all_ids) == len(set(all_ids))
    assert {"spacer~2", "attachmentViewer~1", "attachmentViewer~2", "new-message-line~before"} <= set(all_ids)


def test_load_more_only_when_older_messages_exist():
    assert "load-more" not in refs(chat.render(state(has_older=False), layout="desktop", timeout=5))
    link = next(
        e for e in walk(chat.render(state(), layout="desktop", timeout=5).elements_json()) if e["id"] == "load-more"
    )
    assert link["action"] == {"method": "PATCH", "endpoint": "/profile/messages/load-more?appointment-id=7&before=1"}


def test_messages_are_shown_from_the_viewers_side():
    support_view = chat.render(state(SUPPORT, marker=None), layout="desktop", timeout=5)
    assert [e["ref"] for e in walk(support_view.elements_json()) if e["type"] == "Group"] == [
        "outgoing-1",
        "incoming-2",
        "outgoing-3",
        "outgoing-4",
    ]
    groups = {e["id"]: e for e in walk(chat.render(state(), layout="desktop", timeout=5).elements_json())}
    outgoing = groups["outgoing-2"]
    assert outgoing["props"]["width"] == "90%" and outgoing["props"]["read"] is True
    assert groups["spacer~2"]["props"] == {"width": "10%"}
    assert groups["incoming-3"]["props"]["read"] is False and groups["incoming-1"]["props"]["read"] is True
    assert groups["incoming-1"]["props"]["sender"] == "Sam" and groups["incoming-1"]["props"]["time"]


def test_attachment_viewer_links_to_the_download():
    viewer = next(
        e
        for e in walk(chat.render(state(), layout="desktop", timeout=5).elements_json())
        if e["id"] == "attachmentViewer~1"
    )
    assert viewer["type"] == "Attachment"
    assert viewer["props"] == {"href": "/profile/messages/attachments/101", "mime": "application/pdf", "size": 1234}


def test_no_marker_when_nothing_is_unread():
    assert "new-message" not in refs(chat.render(state(marker=None), layout="desktop", timeout=5))


def test_text_is_a_plain_string_never_markup():
    evil = MessageView(9, 10, "Sam", Role.SUPPORT, "<img src=x onerror=alert(1)>", T0, None)
    page = chat.render(replace(state(), messages=(evil,), has_older=False), layout="desktop", timeout=5)
    group = next(e for e in walk(page.elements_json()) if e["id"] == "incoming-9")
    assert group["value"] == "<img src=x onerror=alert(1)>"


def test_disabled_chat_shows_the_composer_blocked():
    page = chat.render(state(enabled=False), layout="desktop", timeout=5)
    by_id = {e["id"]: e for e in walk(page.elements_json())}
    assert by_id["content"]["enabled"] is False and by_id["upload"]["enabled"] is False
    assert by_id["send"]["enabled"] is False
    assert by_id["chat-blocked"]["type"] == "Notice"
    assert by_id["chat-blocked"]["props"]["code"] == "DOCTOR_COMMUNITY_CHAT_DISABLED"


def test_composer_fields_are_the_spec_form_fields():
    by_id = {e["id"]: e for e in walk(chat.render(state(), layout="desktop", timeout=5).elements_json())}
    assert by_id["content"]["name"] == "content" and by_id["content"]["placeholder"]
    assert by_id["upload"]["name"] == "file" and by_id["upload"]["props"]["max_files"] == 1
    assert by_id["appointment-id"] == {
        "id": "appointment-id",
        "ref": "appointment-id",
        "type": "Hidden",
        "name": "appointment-id",
        "value": "7",
    }
    assert by_id["send"]["action"] == {"method": "POST", "endpoint": "/profile/messages/send-message"}
