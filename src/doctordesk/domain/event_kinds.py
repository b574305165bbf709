"""Every kind of domain event, and the payload (``DomainEvent.data``) each carries (docs/architecture.md#domain-events).

The values are the strings that travel between processes (the bus, the relay's staged rows) and are kept in
outboxes: they never change. A kind's payload is a ``TypedDict`` below (``PAYLOADS``); ``payload_problems`` checks
a payload against it, and ``checked_kind`` turns a string from the wire into a kind or refuses it (``BadEvent``).
Keys beyond the schema are allowed (a newer process may add one); a missing required key or a value of another
type is a problem. (No ``from __future__ import annotations`` here: a ``TypedDict`` reads ``NotRequired`` from its
annotations when the class is made.)
"""

import types
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, Union, get_args, get_origin, get_type_hints

from doctordesk.domain.appointments.decisions import Trigger


class EventKind(StrEnum):
    # An appointment's transition (``appointment.<trigger>``, services/review/decisions.py ``transition``).
    APPOINTMENT_REQUEST = "appointment.request"
    APPOINTMENT_APPROVE = "appointment.approve"
    APPOINTMENT_AUTO_APPROVE = "appointment.auto-approve"
    APPOINTMENT_SUGGEST = "appointment.suggest"
    APPOINTMENT_DECLINE = "appointment.decline"
    APPOINTMENT_ACCEPT_OFFER = "appointment.accept-offer"
    APPOINTMENT_REJECT_OFFERS = "appointment.reject-offers"
    APPOINTMENT_CANCEL = "appointment.cancel"
    APPOINTMENT_COMPLETE = "appointment.complete"
    APPOINTMENT_NO_SHOW = "appointment.no-show"
    APPOINTMENT_RESCHEDULE_REQUEST = "appointment.reschedule-request"
    # Other changes of one appointment.
    APPOINTMENT_PATIENT_CONFIRM = "appointment.patient-confirm"
    APPOINTMENT_REMINDER = "appointment.reminder"
    APPOINTMENT_WAITLIST_MOVE = "appointment.waitlist-move"
    APPOINTMENTS_IMPORTED = "appointments.imported"
    REVIEW_DRAFT_CHANGED = "review.draft-changed"
    NOTICE_DISMISSED = "notice.dismissed"
    # Chat.
    CHAT_MESSAGE = "chat-message"
    CHAT_READ = "chat-read"
    # The waitlist.
    WAITLIST_CHANGED = "waitlist.changed"
    WAITLIST_OFFERED = "waitlist.offered"
    WAITLIST_ACCEPTED = "waitlist.accepted"
    WAITLIST_GONE = "waitlist.gone"
    # Accounts and access.
    TOKEN_REVOKED = "token-revoked"
    USER_LANGUAGE = "user.language"
    ACCOUNT_SECURITY_CHANGED = "account.security-changed"
    ACCOUNT_STAFF_MAIL_CHANGED = "account.staff-mail-changed"
    API_KEY_CHANGED = "api-key-changed"
    # The clinic's data and the administration.
    CLINIC_CHANGED = "clinic.changed"
    ADMIN_CHANGED = "admin.changed"
    DOCTOR_CHAT_SETTING = "doctor.chat-setting"
    CALENDAR_FEED_CHANGED = "calendar-feed.changed"
    # Work queued in an outbox: wakes its sender on every instance.
    PUSH_QUEUED = "push.queued"
    WEBHOOK_QUEUED = "webhook.queued"
    MAIL_QUEUED = "mail.queued"
    MAIL_CHANGED = "mail.changed"
    BULK_QUEUED = "bulk.queued"
    WEBHOOK_ENDPOINT_DISABLED = "webhook.endpoint-disabled"
    # A client's open screen, told to the other instances (realtime/hub.py).
    SCREEN_PRESENCE = "screen-presence"


# Every kind of one appointment's change (``appointment.*``): they wake the waitlist's rounds and FHIR Subscriptions.
APPOINTMENT_KINDS = frozenset(k for k in EventKind if k.value.startswith("appointment."))


def transition_kind(trigger: Trigger) -> EventKind:
    """The event of an appointment's transition by ``trigger``."""
    return EventKind(f"appointment.{trigger.value}")


class NoPayload(TypedDict):
    """Topics only: the screens on them read again."""


class AppointmentChanged(TypedDict):
    appointment_id: int
    from_status: int | None  # None: the appointment was created by this transition
    status: int
    version: int
    start: str  # ISO 8601, UTC
    when: str  # the start as words in UTC
    canceled_by: NotRequired[str]  # ``patient`` or ``clinic`` (a cancellation that says who)


class AppointmentConfirmed(TypedDict):
    appointment_id: int
    status: int
    version: int
    start: str
    confirmed_at: str


class AppointmentReminded(TypedDict):
    appointment_id: int
    mail_key: str  # one mail per reminder, whatever retries
    links: list[Any]  # (name, url) pairs: confirm, cancel


class AppointmentMoved(TypedDict):
    appointment_id: int
    status: int
    version: int
    start: str
    from_start: str


class ChatMessage(TypedDict):
    appointment_id: int
    thread_id: int
    message_id: int
    sender_id: int


class ChatRead(TypedDict):
    appointment_id: int
    reader_id: int


class WaitlistChanged(TypedDict, total=False):
    entry_id: int
    entry_ids: list[int]
    offer_id: int
    why: str


class WaitlistOffered(TypedDict):
    offer_id: int
    entry_id: int
    patient_id: int
    doctor_id: int
    location_id: int
    start: str
    expires_at: str
    mode: str
    service: str


class WaitlistAccepted(TypedDict):
    offer_id: int
    entry_id: int
    patient_id: int
    appointment_id: int
    doctor_id: int
    location_id: int
    start: str
    moved: bool


class WaitlistGone(TypedDict):
    offer_id: int
    why: str  # expired, taken, not-free
    patient_id: NotRequired[int]


class TokenRevoked(TypedDict):
    token_id: int | None
    user_id: int


class UserChanged(TypedDict):
    user_id: int


class ApiKeyChanged(TypedDict, total=False):
    key_id: int  # one key revoked
    account_id: int  # every key of a deactivated account


class ScreenPresence(TypedDict):
    origin: str  # the instance that saw the screen
    client_id: str
    user_id: int
    screen: str
    poll: str
    topics: list[str]


PAYLOADS: dict[EventKind, type[Any]] = {
    **dict.fromkeys(map(transition_kind, Trigger), AppointmentChanged),
    EventKind.APPOINTMENT_PATIENT_CONFIRM: AppointmentConfirmed,
    EventKind.APPOINTMENT_REMINDER: AppointmentReminded,
    EventKind.APPOINTMENT_WAITLIST_MOVE: AppointmentMoved,
    EventKind.APPOINTMENTS_IMPORTED: NoPayload,
    EventKind.REVIEW_DRAFT_CHANGED: NoPayload,
    EventKind.NOTICE_DISMISSED: NoPayload,
    EventKind.CHAT_MESSAGE: ChatMessage,
    EventKind.CHAT_READ: ChatRead,
    EventKind.WAITLIST_CHANGED: WaitlistChanged,
    EventKind.WAITLIST_OFFERED: WaitlistOffered,
    EventKind.WAITLIST_ACCEPTED: WaitlistAccepted,
    EventKind.WAITLIST_GONE: WaitlistGone,
    EventKind.TOKEN_REVOKED: TokenRevoked,
    EventKind.USER_LANGUAGE: UserChanged,
    EventKind.ACCOUNT_SECURITY_CHANGED: UserChanged,
    EventKind.ACCOUNT_STAFF_MAIL_CHANGED: UserChanged,
    EventKind.API_KEY_CHANGED: ApiKeyChanged,
    EventKind.CLINIC_CHANGED: NoPayload,
    EventKind.ADMIN_CHANGED: NoPayload,
    EventKind.DOCTOR_CHAT_SETTING: NoPayload,
    EventKind.CALENDAR_FEED_CHANGED: NoPayload,
    EventKind.PUSH_QUEUED: NoPayload,
    EventKind.WEBHOOK_QUEUED: NoPayload,
    EventKind.MAIL_QUEUED: NoPayload,
    EventKind.MAIL_CHANGED: NoPayload,
    EventKind.BULK_QUEUED: NoPayload,
    EventKind.WEBHOOK_ENDPOINT_DISABLED: NoPayload,
    EventKind.SCREEN_PRESENCE: ScreenPresence,
}


class BadEvent(ValueError):
    """An event refused at the door: an unknown kind, or a payload that does not match its kind's schema."""


def checked_kind(raw: object) -> EventKind:
    """The kind named ``raw`` (a string from the bus or the relay's rows); ``BadEvent`` when there is none."""
    if isinstance(raw, str):
        try:
            return EventKind(raw)
        except ValueError:
            pass
    raise BadEvent(f"unknown event kind {raw!r}")


_HINTS: dict[EventKind, dict[str, Any]] = {}  # each payload schema's fields and types, by kind


def payload_problems(kind: EventKind, data: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``data`` as the payload of ``kind`` (empty: nothing)."""
    schema = PAYLOADS[kind]
    hints = _HINTS.get(kind)
    if hints is None:  # read once per kind: ``get_type_hints`` is slow, and every event from another process is checked
        hints = _HINTS[kind] = get_type_hints(schema)
    problems = [f"{kind}: missing {key!r}" for key in sorted(schema.__required_keys__) if key not in data]
    for key, value in data.items():
        if key in hints and not _matches(value, hints[key]):
            problems.append(f"{kind}: {key!r} is {type(value).__name__}, not {_name(hints[key])}")
    return problems


def check_payload(kind: EventKind, data: Mapping[str, Any]) -> None:
    """``BadEvent`` naming the problems when ``data`` is not a payload of ``kind``."""
    problems = payload_problems(kind, data)
    if problems:
        raise BadEvent("; ".join(problems))


def _matches(value: object, hint: Any) -> bool:
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is NotRequired:
        return _matches(value, get_args(hint)[0])
    if origin is Union or origin is types.UnionType:
        return any(_matches(value, h) for h in get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list | tuple) and all(_matches(v, item) for v in value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, hint)


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint)
