"""Webhooks as rules: which domain events become which webhook event types, what an endpoint URL may be, and the
JSON body a receiver gets (docs/webhooks.md).

    domain event kind                 webhook event type
    appointment.request               appointment.requested
    appointment.approve               appointment.approved
    appointment.auto-approve          appointment.approved
    appointment.suggest               appointment.alternatives-offered
    appointment.decline               appointment.declined
    appointment.accept-offer          appointment.offer-accepted
    appointment.reject-offers         appointment.offers-rejected
    appointment.cancel                appointment.canceled
    appointment.complete              appointment.completed
    appointment.no-show               appointment.no-show
    appointment.reschedule-request    appointment.reschedule-requested
    chat-message                      chat.message-created
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.status import Status
from doctordesk.domain.texts import N_, Text

EVENT_TYPES: dict[str, str] = {
    "appointment.request": "appointment.requested",
    "appointment.approve": "appointment.approved",
    "appointment.auto-approve": "appointment.approved",
    "appointment.suggest": "appointment.alternatives-offered",
    "appointment.decline": "appointment.declined",
    "appointment.accept-offer": "appointment.offer-accepted",
    "appointment.reject-offers": "appointment.offers-rejected",
    "appointment.cancel": "appointment.canceled",
    "appointment.complete": "appointment.completed",
    "appointment.no-show": "appointment.no-show",
    "appointment.reschedule-request": "appointment.reschedule-requested",
    "chat-message": "chat.message-created",
}
CHAT_MESSAGE_CREATED = "chat.message-created"
TEST_EVENT = "webhook.test"
# Every type an endpoint may subscribe to, in the order of the table above.
SUBSCRIBABLE = tuple(dict.fromkeys(EVENT_TYPES.values()))
# The domain event a service emits when it queued deliveries outside a decision (a replay, a test event): it
# wakes the dispatchers of every instance, as the events themselves do.
QUEUED_EVENT = "webhook.queued"

# An endpoint row is an admin's webhook, or the channel of a FHIR Subscription (docs/fhir.md#subscription), which
# the admin webhook API does not show.
WEBHOOK_KIND = "webhook"
SUBSCRIPTION_KIND = "fhir-subscription"

MAX_URL_CHARS = 2048
# The URLs check_url takes, as the API description states them: http or https, a host name or IPv4 address, a port
# in range, a path and query without white space, control characters or a fragment. Loopback and private addresses
# are refused besides, unless the server allows them (DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES).
URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.-]+"
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"
    r"([/?][^\s#\x00-\x1f\x7f-\x9f]*)?$"
)
MAX_DESCRIPTION_CHARS = 500


def event_type_for(kind: str) -> str | None:
    """The webhook event type of a domain event kind; None when webhooks do not carry it."""
    return EVENT_TYPES.get(kind)


def wakes_dispatcher(kind: str) -> bool:
    """Deliveries were queued (by an event's transaction, a replay or an endpoint enabled again)."""
    return kind == QUEUED_EVENT


def clean_event_types(raw: Iterable[str]) -> list[str]:
    """The subscribed types, deduplicated in the documented order; unknown names are refused (naming the field)."""
    wanted = list(raw)
    unknown = sorted({t for t in wanted if t not in SUBSCRIBABLE})
    if unknown:
        raise ValidationFailed(fields={"event_types": Text("Unknown event types: {types}.", types=", ".join(unknown))})
    if not wanted:
        raise ValidationFailed(fields={"event_types": N_("Subscribe to at least one event type.")})
    return [t for t in SUBSCRIBABLE if t in wanted]


def check_url(raw: str, *, allow_private: bool) -> str:
    """An endpoint URL: absolute http or https with a host, without a fragment. Unless ``allow_private``, a host
    that is ``localhost`` or an IP literal in a loopback, private, link-local or otherwise non-public range is
    refused (host names are not resolved here: see docs/webhooks.md#addresses)."""
    url = raw.strip()
    problem: str | None = None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValidationFailed(fields={"url": N_("Not a valid URL.")}) from None
    if len(url) > MAX_URL_CHARS:
        problem = Text("At most {count} characters.", count=MAX_URL_CHARS)
    elif parts.scheme not in ("http", "https"):
        problem = N_("Use an http or https URL.")
    elif not host:
        problem = N_("The URL needs a host.")
    elif parts.fragment or any(c.isspace() for c in url):
        problem = N_("Not a valid URL.")
    elif not allow_private and _is_private(host):
        problem = N_("Loopback and private addresses are not allowed.")
    if problem:
        raise ValidationFailed(fields={"url": problem})
    return url


def _is_private(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not address.is_global


def appointment_data(
    event_data: Mapping[str, Any], *, doctor_id: int | None, patient_id: int | None, location_id: int | None
) -> dict[str, Any]:
    """An appointment event's metadata: ids, status (code and name), version and start; never the patient's
    name, the reason or other free text."""
    status = Status(int(event_data["status"]))
    data: dict[str, Any] = {
        "appointment_id": event_data["appointment_id"],
        "status": {"code": int(status), "name": status.public_name},
        "version": event_data.get("version"),
        "start": event_data.get("start"),
        "doctor_id": doctor_id,
        "patient_id": patient_id,
        "location_id": location_id,
    }
    if event_data.get("from_status") is not None:
        previous = Status(int(event_data["from_status"]))
        data["previous_status"] = {"code": int(previous), "name": previous.public_name}
    return data


def chat_data(event_data: Mapping[str, Any], *, content: str | None) -> dict[str, Any]:
    """A chat message's metadata; ``content`` (the text) only when the endpoint asked for it."""
    data = {
        "appointment_id": event_data["appointment_id"],
        "thread_id": event_data.get("thread_id"),
        "message_id": event_data.get("message_id"),
        "sender_id": event_data.get("sender_id"),
    }
    if content is not None:
        data["content"] = content
    return data


def payload(event_type: str, *, at: datetime, data: Mapping[str, Any]) -> str:
    """The body as sent and signed: ``{"type", "timestamp", "data"}``, compact JSON."""
    return json.dumps(
        {"type": event_type, "timestamp": at.isoformat().replace("+00:00", "Z"), "data": dict(data)},
        separators=(",", ":"),
        ensure_ascii=False,
    )
