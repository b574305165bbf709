"""Event kinds: a closed set whose strings never change, one payload schema each, and a check that refuses what
does not match (docs/architecture.md#domain-events)."""

from __future__ import annotations

from typing import is_typeddict

import pytest

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.domain.event_kinds import (
    APPOINTMENT_KINDS,
    PAYLOADS,
    BadEvent,
    EventKind,
    check_payload,
    checked_kind,
    payload_problems,
    transition_kind,
)
from doctordesk.domain.events import DomainEvent

# The strings on the wire (the bus, the relay's rows) and in outboxes: a kind's value never changes.
WIRE_STRINGS = {
    "appointment.request", "appointment.approve", "appointment.auto-approve", "appointment.suggest",
    "appointment.decline", "appointment.accept-offer", "appointment.reject-offers", "appointment.cancel",
    "appointment.complete", "appointment.no-show", "appointment.reschedule-request", "appointment.patient-confirm",
    "appointment.reminder", "appointment.waitlist-move", "appointments.imported", "review.draft-changed",
    "notice.dismissed", "chat-message", "chat-read", "waitlist.changed", "waitlist.offered", "waitlist.accepted",
    "waitlist.gone", "token-revoked", "user.language", "account.security-changed", "account.staff-mail-changed",
    "api-key-changed", "clinic.changed", "admin.changed", "doctor.chat-setting", "calendar-feed.changed",
    "push.queued", "webhook.queued", "mail.queued", "mail.changed", "bulk.queued", "webhook.endpoint-disabled",
    "screen-presence",
}  # fmt: skip


def test_the_kinds_are_todays_strings() -> None:
    assert {k.value for k in EventKind} == WIRE_STRINGS


def test_every_kind_has_a_payload_schema() -> None:
    assert set(PAYLOADS) == set(EventKind)
    assert all(is_typeddict(schema) for schema in PAYLOADS.values())


@pytest.mark.parametrize("trigger", list(Trigger))
def test_every_transition_has_its_kind(trigger: Trigger) -> None:
    assert transition_kind(trigger).value == f"appointment.{trigger.value}"
    assert transition_kind(trigger) in APPOINTMENT_KINDS


def test_the_appointment_kinds_are_those_named_appointment_dot() -> None:
    assert {k.value for k in APPOINTMENT_KINDS} == {s for s in WIRE_STRINGS if s.startswith("appointment.")}


def test_an_unknown_kind_is_refused() -> None:
    assert checked_kind("chat-read") is EventKind.CHAT_READ
    for raw in ("chat.read", "", None, 7):
        with pytest.raises(BadEvent, match="unknown event kind"):
            checked_kind(raw)


def test_an_event_of_a_free_string_is_refused() -> None:
    with pytest.raises(TypeError, match="EventKind"):
        DomainEvent("clinic.changed", ("clinic",))  # type: ignore[arg-type]


def test_a_payload_missing_a_required_key_is_refused() -> None:
    data = {"appointment_id": 1, "thread_id": 2, "message_id": 3}
    assert payload_problems(EventKind.CHAT_MESSAGE, data) == ["chat-message: missing 'sender_id'"]
    with pytest.raises(BadEvent, match="sender_id"):
        check_payload(EventKind.CHAT_MESSAGE, data)


def test_a_value_of_another_type_is_refused() -> None:
    assert payload_problems(EventKind.CHAT_READ, {"appointment_id": "1", "reader_id": True}) == [
        "chat-read: 'appointment_id' is str, not int",
        "chat-read: 'reader_id' is bool, not int",
    ]
    assert payload_problems(EventKind.WAITLIST_CHANGED, {"entry_ids": [1, "2"]}) != []


def test_optional_keys_may_be_missing_or_none_where_typed_so() -> None:
    assert payload_problems(EventKind.WAITLIST_CHANGED, {}) == []
    assert payload_problems(EventKind.WAITLIST_GONE, {"offer_id": 1, "why": "not-free"}) == []
    assert payload_problems(EventKind.TOKEN_REVOKED, {"token_id": None, "user_id": 1}) == []
    assert payload_problems(EventKind.API_KEY_CHANGED, {"account_id": 4}) == []


def test_keys_beyond_the_schema_are_allowed() -> None:
    assert payload_problems(EventKind.CLINIC_CHANGED, {"pad": "x"}) == []
