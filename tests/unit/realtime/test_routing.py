"""Which message a client's active screen gets for an event (the routing table of docs/realtime.md)."""

from __future__ import annotations

from doctordesk.domain.events import CLINIC_TOPIC, appointment_topic, doctor_topic, thread_topic, user_topic
from doctordesk.realtime.message import RealtimeMessage
from doctordesk.realtime.routing import Screen, message_for

LIST = Screen(
    user_id=1, screen="appointment-list", poll="/profile/appointments", topics=(doctor_topic(1), user_topic(1))
)
CHAT = Screen(
    user_id=1, screen="chat", poll="/profile/messages/load-more", topics=(thread_topic(7), appointment_topic(7))
)


def test_a_status_change_in_the_list_gives_the_list_a_timeout() -> None:
    assert message_for({doctor_topic(1), appointment_topic(3)}, LIST) == RealtimeMessage(timeout=True)


def test_a_new_message_in_the_open_chat_gives_its_patch_endpoint_only() -> None:
    assert message_for({thread_topic(7), doctor_topic(1)}, CHAT) == RealtimeMessage(
        endpoint="/profile/messages/load-more"
    )


def test_a_change_to_the_chats_content_and_state_gives_timeout_and_endpoint() -> None:
    assert message_for({thread_topic(7), appointment_topic(7)}, CHAT) == RealtimeMessage(
        timeout=True, endpoint="/profile/messages/load-more"
    )


def test_an_event_that_does_not_touch_the_screen_gives_nothing() -> None:
    assert message_for({thread_topic(8), doctor_topic(2)}, CHAT) is None
    assert message_for({doctor_topic(2)}, LIST) is None
    assert message_for(set(), LIST) is None


def test_a_clinic_change_sends_nothing_though_the_screens_show_it() -> None:
    """Quiet: every open screen shows the clinic's data; each renders it at its own next poll instead of all at once."""
    list_ = Screen(LIST.user_id, LIST.screen, LIST.poll, (*LIST.topics, CLINIC_TOPIC))
    assert message_for({CLINIC_TOPIC}, list_) is None
    assert message_for({CLINIC_TOPIC, doctor_topic(1)}, list_) == RealtimeMessage(timeout=True)
