"""Webhooks as rules: which domain events become which webhook event types (``EVENT_TYPES``), what an endpoint URL
may be, and the JSON body a receiver gets (docs/webhooks.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.webhooks import addresses

EVENT_TYPES: dict[str, str] = {
    EventKind.APPOINTMENT_REQUEST: "appointment.requested",
    EventKind.APPOINTMENT_APPROVE: "appointment.approved",
    EventKind.APPOINTMENT_AUTO_APPROVE: "appointment.approved",
    EventKind.APPOINTMENT_SUGGEST: "appointment.alternatives-offered",
    EventKind.APPOINTMENT_DECLINE: "appointment.declined",
    EventKind.APPOINTMENT_ACCEPT_OFFER: "appointment.offer-accepted",
    EventKind.APPOINTMENT_REJECT_OFFERS: "appointment.offers-rejected",
    EventKind.APPOINTMENT_CANCEL: "appointment.canceled",
    EventKind.APPOINTMENT_COMPLETE: "appointment.completed",
    EventKind.APPOINTMENT_NO_SHOW: "appointment.no-show",
    EventKind.APPOINTMENT_RESCHEDULE_REQUEST: "appointment.reschedule-requested",
    # The patient said they will come, through a reminder's link (docs/notifications.md#reminders).
    EventKind.APPOINTMENT_PATIENT_CONFIRM: "appointment.confirmed",
    EventKind.CHAT_MESSAGE: "chat.message-created",
    # The waitlist (docs/waitlist.md): a freed time offered to a waiting patient, an offer accepted, and an
    # approved appointment moved to a freed time at once (direct moves).
    EventKind.WAITLIST_OFFERED: "waitlist.offer-made",
    EventKind.WAITLIST_ACCEPTED: "waitlist.offer-accepted",
    EventKind.APPOINTMENT_WAITLIST_MOVE: "appointment.moved-from-waitlist",
}
WAITLIST_TYPES = frozenset({"waitlist.offer-made", "waitlist.offer-accepted"})
CHAT_MESSAGE_CREATED = "chat.message-created"
TEST_EVENT = "webhook.test"
# Every type an endpoint may subscribe to, in the order of the table above.
SUBSCRIBABLE = tuple(dict.fromkeys(EVENT_TYPES.values()))
# The domain event a service emits when it queued deliveries outside a decision (a replay, a test event): it
# wakes the dispatchers of every instance, as the events themselves do.
QUEUED_EVENT = EventKind.WEBHOOK_QUEUED

# An endpoint row is an admin's webhook, or the channel of a FHIR Subscription (docs/fhir.md#subscription), which
# the admin webhook API does not show.
WEBHOOK_KIND = "webhook"
SUBSCRIPTION_KIND = "fhir-subscription"

MAX_URL_CHARS = 2048
# The URLs check_url takes, as the API description states them: http or https; a host name (RFC 1123 labels, the
# last one starting with a letter, at most 253 characters, a trailing dot allowed), an IPv4 address in dotted
# decimal or an IPv6 address in brackets; a port in range; a path and query without white space, control
# characters or a fragment. Loopback and private addresses are refused besides, unless the server allows them
# (DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES); a Unicode host name is taken in its IDNA form. The pattern has no
# lookahead: a generator of examples (Schemathesis, Hypothesis) ignores one and filters its output instead, which
# made the conformance run of these operations take more than ten minutes. The names' limit of 253 characters is
# therefore checked beside it (addresses.parse_host) and stated in the field's description.
_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"(?:{_DEC_OCTET}\.){{3}}{_DEC_OCTET}"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_NAME = rf"(?:{_LABEL}\.)*{_TOP_LABEL}\.?"
_H16 = r"[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "|".join(  # RFC 3986's IPv6address
    [
        rf"(?:{_H16}:){{6}}{_LS32}",
        rf"::(?:{_H16}:){{5}}{_LS32}",
        rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
        rf"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
        rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
        rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
        rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
        rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
        rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
    ]
)
URL_PATTERN = (
    rf"^[Hh][Tt][Tt][Pp][Ss]?://(?:{_IPV4}|\[(?:{_IPV6})\]|{_NAME})"
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"
    r"([/?][^\s#\x00-\x1f\x7f-\x9f]*)?$"
)
_URL = re.compile(URL_PATTERN)
PRIVATE_REFUSED = N_("Loopback and private addresses are not allowed.")
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
    """An endpoint URL of the form ``URL_PATTERN`` states (a Unicode host name becomes its IDNA form). Unless
    ``allow_private``, a host that is an address other than a public one (in whatever form a resolver reads it:
    ``0x7f.1``, ``2130706433``, ``[::ffff:127.0.0.1]``), a local name (``localhost``, ``*.localhost``,
    ``ip6-localhost``...) or a name without a domain is refused. This is the early, friendly refusal: names are
    not resolved here, the dispatcher checks every address it dials (docs/webhooks.md#addresses)."""
    url = raw.strip()
    try:
        parts = urlsplit(url)
        hostname = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValidationFailed(fields={"url": N_("Not a valid URL.")}) from None
    problem: str | None = None
    if len(url) > MAX_URL_CHARS:
        problem = Text("At most {count} characters.", count=MAX_URL_CHARS)
    elif parts.scheme not in ("http", "https"):
        problem = N_("Use an http or https URL.")
    elif not hostname:
        problem = N_("The URL needs a host.")
    else:
        problem, url = _host_problem(url, parts.netloc, hostname, allow_private=allow_private)
    if problem is None and not _URL.fullmatch(url):
        problem = N_("Not a valid URL.")
    if problem:
        raise ValidationFailed(fields={"url": problem})
    return url


def _host_problem(url: str, netloc: str, hostname: str, *, allow_private: bool) -> tuple[str | None, str]:
    """Why the URL's host is refused (None: it is not), and the URL with a Unicode host name in IDNA form."""
    try:
        host = addresses.parse_host(hostname)
    except addresses.NotAHost as refused:
        if refused.numeric:
            return N_("Write an IPv4 address as four decimal numbers, e.g. 192.0.2.10."), url
        return N_("Not a valid host name."), url
    if not allow_private:
        if host.address is not None and not addresses.is_public(host.address):
            return PRIVATE_REFUSED, url
        if host.is_local_name:
            return PRIVATE_REFUSED, url
        if host.name is not None and "." not in host.name:  # found through a search domain or /etc/hosts only
            return N_("Use a full host name with its domain, e.g. hooks.example.org."), url
    if host.address is not None and host.address.version == 4 and not host.canonical:
        return N_("Write an IPv4 address as four decimal numbers, e.g. 192.0.2.10."), url
    if host.name is not None and not hostname.isascii() and "@" not in netloc:
        # The name as it goes on the wire: what is stored is what was checked and what is dialled.
        _, colon, port = netloc.partition(":")
        name = host.name + ("." if hostname.endswith(".") else "")
        url = urlunsplit(urlsplit(url)._replace(netloc=name + colon + port))
    return None, url


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
    if event_data.get("canceled_by") in ("patient", "clinic"):
        data["canceled_by"] = event_data["canceled_by"]
    if event_data.get("confirmed_at"):
        data["confirmed_at"] = event_data["confirmed_at"]
    return data


def waitlist_data(event_data: Mapping[str, Any]) -> dict[str, Any]:
    """A waitlist offer's metadata: ids, the time and, once accepted, the appointment it became; never names."""
    keys = ("offer_id", "entry_id", "patient_id", "doctor_id", "location_id", "service", "start", "expires_at",
            "mode", "appointment_id", "moved")  # fmt: skip
    return {k: event_data[k] for k in keys if k in event_data}


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
