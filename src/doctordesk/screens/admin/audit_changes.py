"""An audit entry's details as a person reads them (issue 30): one line per changed field, "Name: before → after",
people and locations by name, instants in the reader's zone, money as money, yes and no in words. The raw JSON
stays in the exports (CSV, JSON Lines), which are for machines."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from doctordesk.i18n import N_, _
from doctordesk.i18n.formats import format_local, money

MAX_LINES = 12
MAX_VALUE_CHARS = 80
# Keys holding a user's id (a person), and the location's.
PEOPLE: Final = frozenset({"user_id", "doctor_id", "patient_user_id", "actor_id", "created_by", "sender_id"})
LOCATIONS: Final = frozenset({"location_id"})
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)")

# Field names in words; a field without words here shows its key as it is (a code, like the action's).
LABELS: Final[dict[str, str]] = {
    "display_name": N_("Name"),
    "name": N_("Name"),
    "username": N_("Username"),
    "role": N_("Role"),
    "active": N_("Active"),
    "timezone": N_("Time zone"),
    "specialty": N_("Specialty"),
    "can_prescribe": N_("Can prescribe"),
    "chat_enabled": N_("Chat enabled"),
    "kind": N_("Kind"),
    "doctor_id": N_("Doctor"),
    "user_id": N_("User"),
    "location_id": N_("Location"),
    "amount_cents": N_("Amount"),
    "percent": N_("Per cent"),
    "currency": N_("Currency"),
    "effective_from": N_("Effective from"),
    "retired": N_("Ended"),
    "status": N_("Status"),
    "version": N_("Version"),
    "start": N_("Start"),
    "reason": N_("Reason"),
    "address": N_("Address"),
    "url": N_("Address"),
    "enabled": N_("Enabled"),
    "expires_at": N_("Expires"),
    "valid_from": N_("Valid from"),
    "valid_to": N_("Valid to"),
    "insurer": N_("Insurer"),
    "delivery_id": N_("Delivery"),
    "message_id": N_("Message"),
    "event_type": N_("Event type"),
    "types": N_("Event types"),
    "attempts": N_("Attempts"),
    "replays": N_("Replays"),
}


@dataclass(frozen=True, slots=True)
class Names:
    """What ids in the details stand for, and the zone instants are shown in."""

    people: Mapping[int, str]
    locations: Mapping[int, str]
    zone: str


def person_ids(details: Mapping[str, Any]) -> set[int]:
    """The user ids the details name (top level, and inside ``before`` and ``after``)."""
    found: set[int] = set()
    for part in (details, details.get("before"), details.get("after")):
        if isinstance(part, Mapping):
            found |= {v for k, v in part.items() if k in PEOPLE and isinstance(v, int) and not isinstance(v, bool)}
    return found


def _label(key: str) -> str:
    return _(LABELS[key]) if key in LABELS else key


def _value(key: str, value: Any, names: Names, context: Mapping[str, Any]) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, int) and key in PEOPLE:
        return names.people.get(value) or f"#{value}"
    if isinstance(value, int) and key in LOCATIONS:
        return names.locations.get(value) or f"#{value}"
    if isinstance(value, int) and key == "amount_cents":
        currency = context.get("currency")
        return money(value, currency if isinstance(currency, str) and len(currency) == 3 else "EUR")
    if isinstance(value, str) and _INSTANT.fullmatch(value):
        try:
            return format_local(datetime.fromisoformat(value.replace("Z", "+00:00")), names.zone)
        except ValueError:
            pass
    if isinstance(value, list):
        text = ", ".join(_value(key, v, names, context) for v in value) or "—"
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _changed(before: Mapping[str, Any], after: Mapping[str, Any], names: Names) -> list[str]:
    """A line per field whose value differs; a record nested in both (a doctor's profile inside the user) is
    compared field by field."""
    out: list[str] = []
    for key in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(key), after.get(key)
        if key == "id" or old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            out += _changed(old, new, names)
            continue
        out.append(f"{_label(key)}: {_value(key, old, names, before)} → {_value(key, new, names, after)}")
    return out


def lines(details: Mapping[str, Any], names: Names) -> list[str]:
    """The entry's details, a line each: changed fields as before → after (a new record: its fields), then the
    entry's other facts."""
    before, after = details.get("before"), details.get("after")
    out: list[str] = []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out += _changed(before, after, names)
        if not out:
            out.append(_("No field changed."))
    else:
        for part in (before, after):
            if isinstance(part, Mapping):
                out += [f"{_label(k)}: {_value(k, v, names, part)}" for k, v in part.items() if k != "id"]
    rest = {k: v for k, v in details.items() if k not in ("before", "after")}
    out += [f"{_label(k)}: {_value(k, v, names, rest)}" for k, v in rest.items()]
    if len(out) > MAX_LINES:
        out = [*out[: MAX_LINES - 1], _("… and {count} more", count=len(out) - MAX_LINES + 1)]
    return out
