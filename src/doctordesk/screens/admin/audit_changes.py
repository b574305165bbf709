"""An audit entry's details as a person reads them: one line per changed field, "Name: before → after",
people and locations by name, instants in the reader's zone, money as money, yes and no in words. The raw JSON
stays in the exports (CSV, JSON Lines), which are for machines."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Role
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_local, money
from doctordesk.screens.admin.audit_labels import LABELS, SHOWN_OTHERWISE
from doctordesk.screens.admin.users import ROLE_LABELS
from doctordesk.screens.wording import status_label

MAX_LINES = 12
MAX_VALUE_CHARS = 80
# A record inside an entry (the alternatives sent) is made of short words: it may take more room than free text.
MAX_RECORD_CHARS = 320
# Keys holding a user's id (a person), a patient's record, a location's, a role and an appointment's status.
PEOPLE: Final = frozenset({"user_id", "user", "doctor_id", "doctor", "patient_user_id", "actor_id", "created_by",
                           "sender_id"})  # fmt: skip
PATIENTS: Final = frozenset({"patient_id", "patient"})
LOCATIONS: Final = frozenset({"location_id", "location"})
ROLES: Final = frozenset({"role", "by", "canceled_by", "default_role"})
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)")


@dataclass(frozen=True, slots=True)
class Names:
    """What ids in the details stand for, and the zone instants are shown in."""

    people: Mapping[int, str]
    locations: Mapping[int, str]
    zone: str
    patients: Mapping[int, str] = field(default_factory=dict)


def _ids(details: Mapping[str, Any], keys: frozenset[str]) -> set[int]:
    found: set[int] = set()
    parts = [details, *(details.get(k) for k in ("before", "after", "previous"))]
    alternatives = details.get("alternatives")
    if isinstance(alternatives, list):
        parts += alternatives
    for part in parts:
        if isinstance(part, Mapping):
            found |= {v for k, v in part.items() if k in keys and isinstance(v, int) and not isinstance(v, bool)}
            doctor = part.get("doctor")
            if isinstance(doctor, Mapping):  # a doctor's profile inside the user
                found |= _ids(doctor, keys)
    return found


def person_ids(details: Mapping[str, Any]) -> set[int]:
    """The user ids the details name (top level, inside ``before``, ``after`` and ``previous``, and in the
    alternatives sent)."""
    return _ids(details, PEOPLE)


def patient_ids(details: Mapping[str, Any]) -> set[int]:
    """The patients' record ids the details name."""
    return _ids(details, PATIENTS)


def _label(key: str) -> str:
    return _(LABELS[key]) if key in LABELS else key


def _status(value: Any) -> str:
    if isinstance(value, int) and value in Status._value2member_map_:
        return status_label(Status(value), Role.DOCTOR)
    return "—" if value is None else str(value)


def _named(key: str, value: int, names: Names) -> str | None:
    for keys, found in ((PEOPLE, names.people), (PATIENTS, names.patients), (LOCATIONS, names.locations)):
        if key in keys:
            return found.get(value) or f"#{value}"
    return None


def _value(key: str, value: Any, names: Names, context: Mapping[str, Any]) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, int) and (named := _named(key, value, names)) is not None:
        return named
    if key == "status" and isinstance(value, int):
        return _status(value)
    if isinstance(value, str) and key in ROLES and value in ROLE_LABELS:
        return _(ROLE_LABELS[value])
    if isinstance(value, int) and key == "amount_cents":
        currency = context.get("currency")
        return money(value, currency if isinstance(currency, str) and len(currency) == 3 else "EUR")
    if isinstance(value, str) and _INSTANT.fullmatch(value):
        try:
            return format_local(datetime.fromisoformat(value.replace("Z", "+00:00")), names.zone)
        except ValueError:
            pass
    if isinstance(value, Mapping):
        # A record inside the entry (an alternative sent, a policy's network): its fields in words, never JSON.
        shown = [(k, v) for k, v in value.items() if k not in SHOWN_OTHERWISE]
        text = "(" + "; ".join(f"{_label(k)}: {_value(k, v, names, value)}" for k, v in shown) + ")"
    elif isinstance(value, list):
        text = ", ".join(_value(key, v, names, context) for v in value) or "—"
    else:
        text = str(value)
    limit = MAX_RECORD_CHARS if isinstance(value, Mapping | list) else MAX_VALUE_CHARS
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _fields(record: Mapping[str, Any], names: Names) -> list[str]:
    """A new (or removed) record, a line per field that holds something; a record inside it (a doctor's profile
    inside the user) field by field."""
    out: list[str] = []
    for key, value in record.items():
        if key in SHOWN_OTHERWISE or value is None:
            continue
        if isinstance(value, Mapping):
            out += _fields(value, names)
        else:
            out.append(f"{_label(key)}: {_value(key, value, names, record)}")
    return out


def _moved(details: Mapping[str, Any], names: Names) -> tuple[list[str], set[str]]:
    """An appointment's change in one line per field: its status ("from" → "to"), and what it was before
    (``previous``) → what it is now (the same key at the top level); the keys these lines used."""
    out: list[str] = []
    used: set[str] = set()
    if isinstance(details.get("from"), int) and isinstance(details.get("to"), int):
        out.append(f"{_label('status')}: {_status(details['from'])} → {_status(details['to'])}")
    previous = details.get("previous")
    if isinstance(previous, Mapping):
        for key, old in previous.items():
            if key == "status":
                continue  # said by the status line
            if key in details:
                used.add(key)
                if old != details[key]:
                    now = _value(key, details[key], names, details)
                    out.append(f"{_label(key)}: {_value(key, old, names, previous)} → {now}")
            else:
                out.append(_("{field} before: {value}", field=_label(key), value=_value(key, old, names, previous)))
    return out, used


def lines(details: Mapping[str, Any], names: Names) -> list[str]:
    """The entry's details, a line each: changed fields as before → after (a new record: its fields), then the
    entry's other facts, every field by its label in the reader's language."""
    before, after = details.get("before"), details.get("after")
    out: list[str] = []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out += _changed(before, after, names)
        if not out:
            out.append(_("No field changed."))
    else:
        for part in (before, after):
            if isinstance(part, Mapping):
                out += _fields(part, names)
    moved, used = _moved(details, names)
    out += moved
    rest = {k: v for k, v in details.items() if k not in SHOWN_OTHERWISE and k not in used}
    out += [f"{_label(k)}: {_value(k, v, names, rest)}" for k, v in rest.items()]
    if len(out) > MAX_LINES:
        out = [*out[: MAX_LINES - 1], _("… and {count} more", count=len(out) - MAX_LINES + 1)]
    return out
