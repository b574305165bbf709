from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from doctordesk.domain.chat import messages as chat
from doctordesk.domain.errors import ChatDisabled, Forbidden, ValidationFailed
from doctordesk.domain.roles import Actor, Role

T0 = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
DOCTOR = Actor(1, "doctor1", Role.DOCTOR, "Dr. A")
OTHER_DOCTOR = Actor(2, "doctor2", Role.DOCTOR, "Dr. B")
SUPPORT = Actor(10, "support1", Role.SUPPORT, "Sam")
ADMIN = Actor(20, "admin", Role.ADMIN, "Admin")
PATIENT = Actor(30, "patient1", Role.PATIENT, "Maria", patient_id=5)


def msg(i: int, sender: int, minutes: int = 0) -> chat.MessageView:
    return chat.MessageView(i, sender, "x", Role.DOCTOR, "hello", T0 + timedelta(minutes=minutes))


def send(actor: Actor = DOCTOR, **kw) -> None:
    args = {"doctor_id": 1, "chat_enabled": True, "content": "Hello", "has_file": False, "max_chars": 10}
    args.update(kw)
    chat.check_send(actor, **args)


def test_the_appointments_doctor_and_support_write_admins_only_read():
    assert chat.may_write(DOCTOR, doctor_id=1) and chat.may_write(SUPPORT, doctor_id=1)
    assert not chat.may_write(ADMIN, doctor_id=1) and chat.may_read(ADMIN, doctor_id=1)
    assert not chat.may_read(OTHER_DOCTOR, doctor_id=1) and not chat.may_write(OTHER_DOCTOR, doctor_id=1)


def test_patients_never_reach_the_chat():
    assert not chat.may_read(PATIENT, doctor_id=1)
    with pytest.raises(Forbidden):
        chat.require_chat_role(PATIENT)


@pytest.mark.parametrize("content", ["", "   ", "\n\t  \n"])
def test_empty_or_whitespace_message_without_a_file_is_refused(content):
    with pytest.raises(ValidationFailed) as caught:
        send(content=content)
    assert "content" in caught.value.fields


def test_a_file_alone_may_be_sent_without_text():
    send(content="", has_file=True)


def test_content_over_the_limit_is_refused():
    with pytest.raises(ValidationFailed):
        send(content="x" * 11)
    send(content="x" * 10)


def test_content_with_nul_or_escape_characters_is_refused_but_newlines_are_kept():
    with pytest.raises(ValidationFailed):
        send(content="a\x00b")
    with pytest.raises(ValidationFailed):
        send(content="a\x1b[2J")
    send(content="a\r\nb\tc")


def test_disabled_chat_refuses_the_send():
    with pytest.raises(ChatDisabled):
        send(chat_enabled=False)


def test_admins_cannot_send():
    with pytest.raises(Forbidden):
        send(ADMIN)


def test_client_message_id_is_bounded():
    assert chat.check_client_message_id("abc-123_X") == "abc-123_X"
    assert chat.check_client_message_id(None) is None
    for bad in ("a" * 65, "a b", "../x", "ä"):
        with pytest.raises(ValidationFailed):
            chat.check_client_message_id(bad)


def test_own_messages_are_never_unread_and_others_after_the_read_position_are():
    messages = [msg(1, 10, 0), msg(2, 1, 1), msg(3, 10, 2), msg(4, 10, 3)]
    position = chat.Cursor(messages[1].created_at, 2)
    assert chat.first_unread(messages, reader_id=1, read_up_to=position) == 3
    assert chat.first_unread(messages, reader_id=1, read_up_to=None) == 1
    assert chat.first_unread(messages, reader_id=10, read_up_to=None) == 2
    assert chat.first_unread(messages, reader_id=1, read_up_to=messages[3].cursor) is None


def test_order_is_by_time_then_id_not_id_alone():
    early_high_id = msg(9, 10, 0)
    late_low_id = msg(5, 10, 5)
    assert chat.is_unread(late_low_id, reader_id=1, read_up_to=early_high_id.cursor)
    assert not chat.is_unread(early_high_id, reader_id=1, read_up_to=late_low_id.cursor)


def test_read_flag_is_the_other_sides_read_position():
    doctors_message, supports_message = msg(1, 1, 0), msg(2, 10, 1)
    support_read = chat.Cursor(doctors_message.created_at, 1)
    assert chat.counterpart_read(doctors_message, doctor_id=1, doctor_read=None, support_read=support_read)
    assert not chat.counterpart_read(supports_message, doctor_id=1, doctor_read=None, support_read=support_read)


def test_rate_limit_allows_up_to_the_limit_per_sliding_minute():
    assert chat.retry_after([T0] * 2, now=T0, per_minute=3) is None
    assert chat.retry_after([T0] * 3, now=T0, per_minute=3) == 60
    assert chat.retry_after([T0, T0 + timedelta(seconds=50)], now=T0 + timedelta(seconds=55), per_minute=2) == 5


def test_excerpt_is_one_line_and_bounded():
    assert chat.excerpt("a\n\nb  c") == "a b c"
    assert len(chat.excerpt("x" * 500)) == 120
