"""Every event kind, with a payload of its schema, goes through the in-process bus and across the wire (JSON, as
the shared buses carry it) unchanged; what another process sends of an unknown kind, or without a key its kind
requires, is refused and logged while the rest of its batch is delivered."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from doctordesk.domain.event_kinds import BadEvent, EventKind, payload_problems
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime import relay
from doctordesk.realtime.bus import MemoryBus, event_from_json, event_to_json
from doctordesk.realtime.shared import batch_events

_CHANGE = {"appointment_id": 5, "status": 2, "version": 3, "start": "2026-12-01T09:00:00+00:00"}
_TRANSITION = {**_CHANGE, "from_status": 1, "when": "Tue 1 Dec 2026, 09:00"}

# A payload of every kind, as its emitter writes it.
PAYLOADS: dict[EventKind, dict[str, Any]] = {
    EventKind.APPOINTMENT_REQUEST: {**_TRANSITION, "from_status": None},
    EventKind.APPOINTMENT_APPROVE: _TRANSITION,
    EventKind.APPOINTMENT_AUTO_APPROVE: _TRANSITION,
    EventKind.APPOINTMENT_SUGGEST: _TRANSITION,
    EventKind.APPOINTMENT_DECLINE: _TRANSITION,
    EventKind.APPOINTMENT_ACCEPT_OFFER: _TRANSITION,
    EventKind.APPOINTMENT_REJECT_OFFERS: _TRANSITION,
    EventKind.APPOINTMENT_CANCEL: {**_TRANSITION, "canceled_by": "patient"},
    EventKind.APPOINTMENT_COMPLETE: _TRANSITION,
    EventKind.APPOINTMENT_NO_SHOW: _TRANSITION,
    EventKind.APPOINTMENT_RESCHEDULE_REQUEST: _TRANSITION,
    EventKind.APPOINTMENT_PATIENT_CONFIRM: {**_CHANGE, "confirmed_at": "2026-11-30T08:00:00+00:00"},
    EventKind.APPOINTMENT_REMINDER: {
        "appointment_id": 5,
        "mail_key": "reminder:5:1796115600:24",
        "links": [("confirm", "https://x/c"), ("cancel", "https://x/d")],
    },
    EventKind.APPOINTMENT_WAITLIST_MOVE: {**_CHANGE, "from_start": "2026-12-08T09:00:00+00:00"},
    EventKind.APPOINTMENTS_IMPORTED: {},
    EventKind.REVIEW_DRAFT_CHANGED: {},
    EventKind.NOTICE_DISMISSED: {},
    EventKind.CHAT_MESSAGE: {"appointment_id": 5, "thread_id": 6, "message_id": 7, "sender_id": 8},
    EventKind.CHAT_READ: {"appointment_id": 5, "reader_id": 8},
    EventKind.WAITLIST_CHANGED: {"entry_ids": [1, 2], "why": "last-day"},
    EventKind.WAITLIST_OFFERED: {
        "offer_id": 1,
        "entry_id": 2,
        "patient_id": 3,
        "doctor_id": 4,
        "location_id": 5,
        "start": "2026-12-01T09:00:00+00:00",
        "expires_at": "2026-11-30T12:00:00+00:00",
        "mode": "one-at-a-time",
        "service": "checkup",
    },  # fmt: skip
    EventKind.WAITLIST_ACCEPTED: {
        "offer_id": 1,
        "entry_id": 2,
        "patient_id": 3,
        "appointment_id": 9,
        "doctor_id": 4,
        "location_id": 5,
        "start": "2026-12-01T09:00:00+00:00",
        "moved": True,
    },  # fmt: skip
    EventKind.WAITLIST_GONE: {"offer_id": 1, "patient_id": 3, "why": "taken"},
    EventKind.TOKEN_REVOKED: {"token_id": 11, "user_id": 8},
    EventKind.USER_LANGUAGE: {"user_id": 8},
    EventKind.ACCOUNT_SECURITY_CHANGED: {"user_id": 8},
    EventKind.ACCOUNT_STAFF_MAIL_CHANGED: {"user_id": 8},
    EventKind.API_KEY_CHANGED: {"key_id": 3},
    EventKind.CLINIC_CHANGED: {},
    EventKind.ADMIN_CHANGED: {},
    EventKind.DOCTOR_CHAT_SETTING: {},
    EventKind.CALENDAR_FEED_CHANGED: {},
    EventKind.PUSH_QUEUED: {},
    EventKind.WEBHOOK_QUEUED: {},
    EventKind.MAIL_QUEUED: {},
    EventKind.MAIL_CHANGED: {},
    EventKind.BULK_QUEUED: {},
    EventKind.WEBHOOK_ENDPOINT_DISABLED: {},
    EventKind.SCREEN_PRESENCE: {
        "origin": "i-1",
        "client_id": "c-1",
        "user_id": 8,
        "screen": "chat",
        "poll": "/profile/messages/load-more",
        "topics": ["thread:5"],
    },  # fmt: skip
}
EVENTS = [DomainEvent(kind, ("doctor:4",), data) for kind, data in PAYLOADS.items()]


def _wire(events: list[DomainEvent], *, origin: str = "other") -> dict[str, Any]:
    """A batch as another process sends it (``redis_bus``, ``socket_bus``)."""
    return json.loads(json.dumps({"origin": origin, "events": [event_to_json(e) for e in events]}, default=str))


def test_every_kind_has_an_example() -> None:
    assert set(PAYLOADS) == set(EventKind)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind.value)
def test_each_example_matches_its_kinds_schema(event: DomainEvent) -> None:
    assert payload_problems(event.kind, event.data) == []


async def test_every_kind_is_delivered_by_the_in_process_bus() -> None:
    bus, seen = MemoryBus(), []

    async def handler(event: DomainEvent) -> None:
        seen.append(event)

    bus.subscribe(handler)
    await bus.publish(EVENTS)
    assert seen == EVENTS
    assert all(payload_problems(e.kind, e.data) == [] for e in seen)


def test_every_kind_crosses_the_wire_as_the_same_string() -> None:
    body = _wire(EVENTS)
    assert [e["kind"] for e in body["events"]] == [k.value for k in PAYLOADS]
    back = batch_events(body)
    assert [(e.kind, e.topics) for e in back] == [(e.kind, e.topics) for e in EVENTS]
    assert all(type(e.kind) is EventKind for e in back)


def test_an_unknown_kind_from_the_wire_is_refused_and_the_rest_delivered(caplog: pytest.LogCaptureFixture) -> None:
    body = _wire([EVENTS[0], EVENTS[-1]], origin="i-9")
    body["events"][0]["kind"] = "appointment.teleport"
    with caplog.at_level(logging.WARNING):
        back = batch_events(body)
    assert [e.kind for e in back] == [EventKind.SCREEN_PRESENCE]
    assert "refused an event from i-9: unknown event kind 'appointment.teleport'" in caplog.text


def test_a_payload_missing_a_required_key_from_the_wire_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    body = _wire([DomainEvent(EventKind.CHAT_READ, ("thread:5",), {"appointment_id": 5})])
    with pytest.raises(BadEvent, match="missing 'reader_id'"):
        event_from_json(body["events"][0])
    with caplog.at_level(logging.WARNING):
        assert batch_events(body) == []
    assert "chat-read: missing 'reader_id'" in caplog.text


def test_a_staged_row_of_an_unknown_kind_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    rows: Any = [(1, "appointments.imported", "appointments\nappointment:5"), (2, "x.changed", "clinic")]
    with caplog.at_level(logging.WARNING):
        events = relay._events(rows)
    assert events == [DomainEvent(EventKind.APPOINTMENTS_IMPORTED, ("appointments", "appointment:5"))]
    assert "relay: refused staged event 2: unknown event kind 'x.changed'" in caplog.text
