"""FHIR R4 Subscriptions as rules (docs/fhir.md#subscription): what a Subscription resource may ask for (a
rest-hook channel, criteria on Appointment by status and participants, an optional application/fhir+json payload,
extra headers), whether an appointment matches the criteria, and the status a subscription reads as.

Refusals name the element: ``NotSupported`` (400, not-supported) for what R4 allows but this server does not
serve (another channel type, another resource, another search parameter), ``ValidationFailed`` (400, invalid) for
what is malformed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from doctordesk.domain import moments
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.webhooks import rules as webhook_rules

RESOURCE = "Appointment"
CHANNEL = "rest-hook"
PAYLOAD = fhir_mapping.MEDIA_TYPE
# Appointment search parameters a criteria may use: the ones a single appointment's state answers.
PARAMETERS = {"status": None, "practitioner": "Practitioner", "patient": "Patient", "location": "Location"}
R4_CHANNELS = frozenset({"rest-hook", "websocket", "email", "sms", "message"})
# The statuses a client may ask for; "error" is the server's to set. A new subscription asked as "requested" is
# active at once (the endpoint is checked by its first delivery, not by a handshake).
CLIENT_STATUSES = frozenset({"requested", "active", "off"})
MAX_CRITERIA_CHARS = 1000
MAX_REASON_CHARS = 500
MAX_HEADERS = 10
MAX_HEADER_CHARS = 1000
# A subscription that is not off costs a check on every appointment change: an owner may keep this many.
MAX_ACTIVE_PER_OWNER = 20
# Headers the service sets itself (or HTTP owns): a subscription may not send its own.
RESERVED_HEADERS = frozenset(
    {"content-type", "content-length", "content-encoding", "host", "transfer-encoding", "connection", "keep-alive",
     "te", "trailer", "upgrade", "expect", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"}
)  # fmt: skip
# The create answer's extension carrying the signing secret (shown once); ignored when a client sends it back.
SECRET_EXTENSION = "urn:doctordesk:fhir:signing-secret"
ACCEPTED = frozenset(
    {"resourceType", "id", "meta", "text", "extension", "status", "reason", "criteria", "channel", "end", "error"}
)
CHANNEL_ACCEPTED = frozenset({"type", "endpoint", "payload", "header"})
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", re.ASCII)

# Parsed criteria: parameter → groups (one per occurrence, ANDed) of accepted values (ORed within a group).
Match = dict[str, list[list[Any]]]


@dataclass(frozen=True, slots=True)
class SubscriptionInput:
    """What a Subscription resource asks for, checked."""

    status: str  # "active" or "off"
    reason: str
    criteria: str
    match: Match
    endpoint: str
    payload: str | None
    headers: list[str]
    end: datetime | None


def parse_criteria(raw: Any) -> tuple[str, Match]:
    """The criteria as given (trimmed) and parsed: ``Appointment`` or ``Appointment?name=value&...`` with
    ``status`` (Appointment statuses), ``practitioner``, ``patient`` and ``location`` (``Type/<id>`` or an id);
    commas OR values, repeated parameters AND them. Anything else is refused, naming ``criteria``."""
    if not isinstance(raw, str) or not raw.strip():
        raise ValidationFailed(fields={"criteria": N_("Use Appointment?<search parameters>.")})
    text = raw.strip()
    if len(text) > MAX_CRITERIA_CHARS:
        raise ValidationFailed(
            fields={"criteria": Text("At most {max_criteria_chars} characters.", max_criteria_chars=MAX_CRITERIA_CHARS)}
        )
    kind, _, query = text.partition("?")
    if kind != RESOURCE:
        if re.fullmatch(r"[A-Z][A-Za-z]{1,63}", kind):
            raise NotSupported(fields={"criteria": N_("Subscriptions here are on Appointment only.")})
        raise ValidationFailed(fields={"criteria": N_("Use Appointment?<search parameters>.")})
    match: Match = {}
    for part in query.split("&") if query else ():
        name, equals, value = part.partition("=")
        name, value = unquote(name), unquote(value)
        if not equals or not name or not value:
            raise ValidationFailed(fields={"criteria": N_("Each parameter is name=value.")})
        if name not in PARAMETERS:
            supported = ", ".join(PARAMETERS)
            raise NotSupported(
                fields={
                    "criteria": Text(
                        "The parameter {name} is not supported here; use {supported}.",
                        name=repr(name),
                        supported=supported,
                    )
                }
            )
        match.setdefault(name, []).append(_values(name, value))
    return text, match


def _values(name: str, value: str) -> list[Any]:
    kind = PARAMETERS[name]
    items = [v for v in value.split(",") if v]
    if not items:
        raise ValidationFailed(fields={"criteria": Text("{name} needs a value.", name=name)})
    if kind is None:
        if any(v not in fhir_mapping.APPOINTMENT_STATUSES for v in items):
            raise ValidationFailed(
                fields={"criteria": N_("status takes Appointment statuses (proposed, booked, ...).")}
            )
        return sorted(set(items))
    ids = [fhir_mapping.reference_id(v, kind) for v in items]
    if any(i is None for i in ids):
        raise ValidationFailed(fields={"criteria": Text("{name} takes {kind}/<id>.", name=name, kind=kind)})
    return sorted({i for i in ids if i is not None})


def matches(match: Mapping[str, Sequence[Sequence[Any]]], facts: Mapping[str, Any]) -> bool:
    """Whether an appointment (``facts``: its FHIR ``status`` and the ids of its ``practitioner``, ``patient`` and
    ``location``) meets parsed criteria: its value is in every group of every parameter."""
    return all(facts.get(name) in group for name, groups in match.items() for group in groups)


def practitioners(match: Mapping[str, Sequence[Sequence[Any]]]) -> set[int]:
    """Every practitioner id the criteria name."""
    return {int(i) for group in match.get("practitioner", ()) for i in group}


def check_headers(raw: Any) -> list[str]:
    """``channel.header``: up to MAX_HEADERS ``Name: value`` strings (a token, then printable ASCII), none of the
    headers the service sets itself; normalised to ``Name: value``."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_HEADERS:
        raise ValidationFailed(
            fields={"channel.header": Text("A list of at most {max_headers} headers.", max_headers=MAX_HEADERS)}
        )
    out: list[str] = []
    for item in raw:
        if not isinstance(item, str) or len(item) > MAX_HEADER_CHARS:
            raise ValidationFailed(
                fields={
                    "channel.header": Text(
                        "Each header is a string of at most {max_header_chars}.", max_header_chars=MAX_HEADER_CHARS
                    )
                }
            )
        name, colon, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _TOKEN.fullmatch(name) or not value or not (value.isascii() and value.isprintable()):
            raise ValidationFailed(fields={"channel.header": N_("Use 'Name: value' (printable ASCII, one line).")})
        if name.lower() in RESERVED_HEADERS:
            raise ValidationFailed(
                fields={"channel.header": Text("The header {name} is set by the service.", name=name)}
            )
        out.append(f"{name}: {value}")
    return out


def header_pairs(headers: Sequence[str]) -> list[tuple[str, str]]:
    """Stored ``Name: value`` headers as (name, value)."""
    pairs = []
    for item in headers:
        name, _, value = item.partition(":")
        pairs.append((name.strip(), value.strip()))
    return pairs


def check_endpoint(raw: Any, *, allow_private: bool) -> str:
    """``channel.endpoint``: the webhooks' URL rule (docs/webhooks.md#addresses), and ``https`` unless private
    addresses are allowed (tests, development): a notification carries patients' appointments."""
    if not isinstance(raw, str):
        raise ValidationFailed(fields={"channel.endpoint": N_("The https URL to notify.")})
    try:
        url = webhook_rules.check_url(raw, allow_private=allow_private)
    except ValidationFailed as refused:
        raise ValidationFailed(fields={"channel.endpoint": refused.fields.get("url", N_("Not a valid URL."))}) from None
    if urlsplit(url).scheme != "https" and not allow_private:
        raise ValidationFailed(fields={"channel.endpoint": N_("Use an https URL.")})
    return url


def _channel(raw: Any, *, allow_private: bool) -> tuple[str, str | None, list[str]]:
    if not isinstance(raw, dict):
        raise ValidationFailed(fields={"channel": N_("The channel: type rest-hook and its endpoint.")})
    extra = sorted(set(raw) - CHANNEL_ACCEPTED)
    if extra:
        raise ValidationFailed(fields={f"channel.{k}": N_("Not accepted in a subscription here.") for k in extra})
    kind = raw.get("type")
    if kind != CHANNEL:
        if kind in R4_CHANNELS:
            raise NotSupported(fields={"channel.type": N_("Only rest-hook channels are served.")})
        raise ValidationFailed(fields={"channel.type": N_("Use rest-hook.")})
    payload = raw.get("payload")
    if payload is not None and payload != PAYLOAD:
        if not isinstance(payload, str):
            raise ValidationFailed(fields={"channel.payload": Text("Use {payload}, or leave it out.", payload=PAYLOAD)})
        raise NotSupported(
            fields={"channel.payload": Text("Only {payload} is sent (or, without payload, nothing).", payload=PAYLOAD)}
        )
    endpoint = check_endpoint(raw.get("endpoint"), allow_private=allow_private)
    return endpoint, payload, check_headers(raw.get("header"))


def _end(raw: Any) -> datetime | None:
    if raw is None:
        return None
    problem = N_("Use an instant with its offset, e.g. 2027-01-01T00:00:00Z.")
    if not isinstance(raw, str) or "T" not in raw:
        raise ValidationFailed(fields={"end": problem})
    read = moments.read_instant(raw, seconds=False)
    if isinstance(read, str):
        raise ValidationFailed(fields={"end": moments.RANGE_MESSAGE if read == moments.RANGE_MESSAGE else problem})
    return read


def _extensions(raw: Any) -> None:
    """The signing-secret extension of a create answer may come back (ignored); no other extension is read."""
    items = raw if isinstance(raw, list) else None
    if items is None or any(not isinstance(i, dict) or i.get("url") != SECRET_EXTENSION for i in items):
        raise ValidationFailed(fields={"extension": N_("Not accepted in a subscription here.")})


def parse(body: Mapping[str, Any], *, allow_private: bool) -> SubscriptionInput:
    """The subscription a Subscription resource asks for; ValidationFailed or NotSupported naming the element.
    ``id``, ``meta``, ``text`` and ``error`` are the server's and ignored."""
    extra = sorted(set(body) - ACCEPTED)
    if extra:
        raise ValidationFailed(fields=dict.fromkeys(extra, N_("Not accepted in a subscription here.")))
    if "extension" in body:
        _extensions(body["extension"])
    status = body.get("status")
    if status not in CLIENT_STATUSES:
        raise ValidationFailed(fields={"status": N_("Use requested (or active) to subscribe, off to pause.")})
    reason = body.get("reason")
    problem = (
        N_("Why the subscription exists: 1 to 500 characters.")
        if not isinstance(reason, str) or not reason.strip()
        else text_problem(reason.strip(), max_chars=MAX_REASON_CHARS)
    )
    if problem:
        raise ValidationFailed(fields={"reason": problem})
    criteria, match = parse_criteria(body.get("criteria"))
    endpoint, payload, headers = _channel(body.get("channel"), allow_private=allow_private)
    return SubscriptionInput(
        status="off" if status == "off" else "active",
        reason=str(reason).strip(),
        criteria=criteria,
        match=match,
        endpoint=endpoint,
        payload=payload,
        headers=headers,
        end=_end(body.get("end")),
    )


def status_of(
    *, asked: str, enabled: bool, end: datetime | None, now: datetime, disabled_reason: str | None
) -> tuple[str, str | None]:
    """The Subscription's status and error: off when its owner turned it off or its ``end`` has passed; error
    (with the reason) when the service stopped delivering to it; else active."""
    if asked == "off" or (end is not None and end <= now):
        return "off", None
    if not enabled:
        return "error", disabled_reason or "Delivery stopped."
    return "active", None
