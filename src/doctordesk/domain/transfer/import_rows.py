"""Bulk import rows: the kinds, their fields, and the strict check of one row (pure, no storage).

A raw row maps field names to text (a CSV cell, or a JSON scalar written as text) or to a list of texts (the list
fields). ``check_row`` turns it into typed values, or names every field that is wrong and why. References to other
rows stay external ids here; the import service resolves them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from functools import cache
from typing import Any
from zoneinfo import available_timezones

from doctordesk.domain import moments
from doctordesk.domain.appointments.status import Status, StatusName
from doctordesk.domain.inputs import control_character
from doctordesk.domain.mail.addresses import MAX_CHARS as MAX_ADDRESS_CHARS
from doctordesk.domain.mail.addresses import check_address
from doctordesk.domain.names import code_point, is_seen, refused_character
from doctordesk.domain.texts import N_, Text

RawValue = str | list[str]


class Kind(StrEnum):
    """What a row describes, in the order an import writes them (a row only names rows of earlier kinds)."""

    LOCATIONS = "locations"
    DOCTORS = "doctors"
    HOURS = "hours"
    PATIENTS = "patients"
    POLICIES = "policies"
    APPOINTMENTS = "appointments"


KIND_ORDER: tuple[Kind, ...] = tuple(Kind)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Public status names an import accepts, and the code each one is stored as ("pending-response" is stored as the
# plain pending code; an appointment already pending with a coverage risk keeps its code).
STATUS_CODES: dict[str, Status] = {
    StatusName.REQUESTED.value: Status.REQUESTED,
    StatusName.APPROVED.value: Status.APPROVED,
    StatusName.PENDING_RESPONSE.value: Status.PENDING_RESPONSE,
    StatusName.DECLINED.value: Status.DECLINED,
    StatusName.CANCELED.value: Status.CANCELED,
    StatusName.COMPLETED.value: Status.COMPLETED,
}

_EXTERNAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}", re.ASCII)
_USERNAME = re.compile(r"[a-z0-9][a-z0-9._@+-]{0,63}", re.ASCII)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_INTEGER = re.compile(r"\d{1,9}", re.ASCII)
MAX_DURATION_MINUTES = 24 * 60


class BadValue(ValueError):
    """A field's value is wrong; the message (an ``N_`` text or a ``Text``) says why, shown to the person importing
    in their language."""


@cache
def timezone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def _text(value: RawValue, *, max_length: int, multiline: bool = False) -> str:
    if isinstance(value, list):
        raise BadValue(N_("must be a single value, not a list"))
    if len(value) > max_length:
        raise BadValue(Text("at most {count} characters", count=max_length))
    # Names and codes follow the name rule (domain/names.py), free text the free-text rule (domain/inputs.py):
    # the same rules as every other way in, so what the service stores, an export writes and an import reads back.
    char = control_character(value, multiline=True) if multiline else refused_character(value)
    if char is not None:
        raise BadValue(Text("contains an invisible or control character ({code})", code=code_point(char)))
    # Free text (the insurer's raw record, a reason) is kept as given; names and codes may not hide spaces.
    if not multiline and value != value.strip():
        raise BadValue(N_("has leading or trailing spaces"))
    if not multiline and value and not any(map(is_seen, value)):
        raise BadValue(N_("shows no visible character"))
    return value


def text(*, max_length: int, multiline: bool = False) -> Callable[[RawValue], str]:
    def parse(value: RawValue) -> str:
        return _text(value, max_length=max_length, multiline=multiline)

    return parse


def external_id(value: RawValue) -> str:
    value = _text(value, max_length=64)
    if not _EXTERNAL_ID.fullmatch(value):
        raise BadValue(N_("1 to 64 of A-Z a-z 0-9 . _ : / - (starting with a letter or digit)"))
    return value


def external_ids(value: RawValue) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [v for v in value.split(";") if v != ""]
    parsed = tuple(external_id(item) for item in items)
    if len(set(parsed)) != len(parsed):
        raise BadValue(N_("names the same id twice"))
    return parsed


def names(value: RawValue) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [v for v in value.split(";") if v != ""]
    parsed = tuple(_text(item, max_length=64) for item in items)
    if any(";" in item or not item for item in parsed):
        raise BadValue(N_("an item is empty or holds ';' (the CSV list separator)"))
    return parsed


def username(value: RawValue) -> str:
    value = _text(value, max_length=64)
    if not _USERNAME.fullmatch(value):
        raise BadValue(N_("1 to 64 of a-z 0-9 . _ @ + - (lower case, starting with a letter or digit)"))
    return value


def timezone(value: RawValue) -> str:
    value = _text(value, max_length=64)
    if value not in timezone_names():
        raise BadValue(N_("not an IANA time zone name (for example Europe/Berlin)"))
    return value


def email_address(value: RawValue) -> str:
    try:
        return check_address(_text(value, max_length=MAX_ADDRESS_CHARS))
    except BadValue:
        raise
    except ValueError:
        raise BadValue(N_("not an email address (for example name@example.org)")) from None


def iso_date(value: RawValue) -> date:
    value = _text(value, max_length=10)
    if not _DATE.fullmatch(value):
        raise BadValue(N_("not a date as YYYY-MM-DD"))
    read = moments.read_day(value)
    if read == moments.RANGE_MESSAGE:
        raise BadValue(N_("not a date from 1900-01-01 to 2999-12-31"))
    if isinstance(read, str):
        raise BadValue(N_("not a real calendar date"))
    return read


def local_time(value: RawValue) -> time:
    read = moments.read_time(_text(value, max_length=5))
    if isinstance(read, str):
        raise BadValue(N_("not a time as HH:MM"))
    return read


def instant(value: RawValue) -> datetime:
    read = moments.read_instant(_text(value, max_length=40))
    if read == moments.RANGE_MESSAGE:
        raise BadValue(N_("not a date from 1900-01-01 to 2999-12-31 (offsets up to ±14:00)"))
    if isinstance(read, str):
        raise BadValue(N_("not an ISO 8601 date and time with an offset (for example 2026-11-25T09:30:00+01:00)"))
    return read


def weekday(value: RawValue) -> int:
    value = _text(value, max_length=9)
    if value not in WEEKDAYS:
        raise BadValue(Text("one of {choices}", choices=", ".join(WEEKDAYS)))
    return WEEKDAYS.index(value)


def boolean(value: RawValue) -> bool:
    value = _text(value, max_length=5)
    if value not in ("true", "false"):
        raise BadValue(N_("true or false"))
    return value == "true"


def minutes(value: RawValue) -> int:
    value = _text(value, max_length=9)
    if not _INTEGER.fullmatch(value):
        raise BadValue(N_("a whole number of minutes in ASCII digits"))
    number = int(value)
    if not 1 <= number <= MAX_DURATION_MINUTES:
        raise BadValue(Text("{low} to {high} minutes", low=1, high=MAX_DURATION_MINUTES))
    return number


def status(value: RawValue) -> Status:
    value = _text(value, max_length=32)
    if value not in STATUS_CODES:
        raise BadValue(Text("one of {choices}", choices=", ".join(STATUS_CODES)))
    return STATUS_CODES[value]


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    parse: Callable[[RawValue], Any]
    required: bool = False
    default: Any = None
    # The kind of row this field names by external id (a reference the service resolves).
    refers_to: Kind | None = None


def _fields(*items: Field) -> dict[str, Field]:
    return {f.name: f for f in items}


ID = Field("external_id", external_id, required=True)
FIELDS: dict[Kind, dict[str, Field]] = {
    Kind.LOCATIONS: _fields(
        ID,
        Field("name", text(max_length=128), required=True),
        Field("address", text(max_length=255), default=""),
        Field("timezone", timezone, required=True),
    ),
    Kind.DOCTORS: _fields(
        ID,
        Field("username", username, required=True),
        Field("name", text(max_length=128), required=True),
        Field("specialty", text(max_length=64), required=True),
        Field("timezone", timezone),
        Field("can_prescribe", boolean, default=True),
    ),
    Kind.HOURS: _fields(
        ID,
        Field("doctor", external_id, required=True, refers_to=Kind.DOCTORS),
        Field("location", external_id, required=True, refers_to=Kind.LOCATIONS),
        Field("weekday", weekday, required=True),
        Field("start", local_time, required=True),
        Field("end", local_time, required=True),
    ),
    Kind.PATIENTS: _fields(
        ID,
        Field("name", text(max_length=128), required=True),
        Field("birth_date", iso_date),
        Field("email", email_address),
    ),
    Kind.POLICIES: _fields(
        ID,
        Field("patient", external_id, required=True, refers_to=Kind.PATIENTS),
        Field("insurer", text(max_length=128), required=True),
        Field("policy_number", text(max_length=64), required=True),
        Field("valid_from", iso_date, required=True),
        Field("valid_to", iso_date, required=True),
        Field("network_doctors", external_ids, default=(), refers_to=Kind.DOCTORS),
        Field("network_locations", external_ids, default=(), refers_to=Kind.LOCATIONS),
        Field("excluded_services", names, default=()),
        Field("excluded_doctors", external_ids, default=(), refers_to=Kind.DOCTORS),
        Field("third_party_data", text(max_length=10_000, multiline=True)),
    ),
    Kind.APPOINTMENTS: _fields(
        ID,
        Field("patient", external_id, required=True, refers_to=Kind.PATIENTS),
        Field("doctor", external_id, required=True, refers_to=Kind.DOCTORS),
        Field("location", external_id, required=True, refers_to=Kind.LOCATIONS),
        Field("start", instant, required=True),
        Field("duration_minutes", minutes, default=30),
        Field("status", status, default=Status.REQUESTED),
        Field("service", text(max_length=64), default="consultation"),
        Field("decline_reason", text(max_length=2000, multiline=True)),
        Field("chat_enabled", boolean, default=True),
        Field("disclaimer_required", boolean, default=False),
        Field("prescription_needed", boolean, default=False),
    ),
}
LIST_FIELDS = frozenset({"network_doctors", "network_locations", "excluded_services", "excluded_doctors"})


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a row is bad: the field (empty for the whole row) and why."""

    field: str
    reason: str


@dataclass(slots=True)
class CheckedRow:
    kind: Kind
    line: int
    values: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    # Optional fields without a default that the row does not carry at all (no such column in the file, no such
    # key in the object): a record already stored keeps its value (an empty cell clears it).
    absent: set[str] = field(default_factory=set)

    @property
    def external_id(self) -> str:
        return str(self.values.get("external_id", ""))

    @property
    def ok(self) -> bool:
        return not self.problems

    def carried(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The columns of a stored record this row sets: those of fields it does not carry keep their values."""
        return {column: value for column, value in values.items() if column not in self.absent}

    def references(self) -> list[tuple[str, Kind, str]]:
        """(field, kind, external id) for every row this one names."""
        found: list[tuple[str, Kind, str]] = []
        for spec in FIELDS[self.kind].values():
            if spec.refers_to is None or spec.name not in self.values:
                continue
            value = self.values[spec.name]
            for ref in value if isinstance(value, tuple) else (value,):
                found.append((spec.name, spec.refers_to, ref))
        return found


def check_row(kind: Kind, line: int, raw: Mapping[str, RawValue | None]) -> CheckedRow:
    """Every field of a row checked: typed values, or every problem found (unknown, missing and bad fields)."""
    specs = FIELDS[kind]
    row = CheckedRow(kind=kind, line=line)
    for name in raw:
        if name not in specs:
            row.problems.append(Problem(name, Text("not a field of {kind}", kind=kind.value)))
    for name, spec in specs.items():
        value = raw.get(name)
        if value is None or value == "" or (value == [] and name not in LIST_FIELDS):
            if spec.required:
                row.problems.append(Problem(name, N_("required")))
            else:
                row.values[name] = spec.default
                if name not in raw and spec.default is None:
                    row.absent.add(name)
            continue
        try:
            row.values[name] = spec.parse(value)
        except BadValue as exc:
            row.problems.append(Problem(name, exc.args[0]))  # the text itself (a Text keeps its template)
    if row.ok:
        row.problems.extend(_cross_field(kind, row.values))
    return row


def _cross_field(kind: Kind, values: Mapping[str, Any]) -> Sequence[Problem]:
    if kind is Kind.HOURS and values["start"] >= values["end"]:
        return [Problem("end", N_("must be after start"))]
    if kind is Kind.POLICIES and values["valid_from"] > values["valid_to"]:
        return [Problem("valid_to", N_("must not be before valid_from"))]
    if kind is Kind.APPOINTMENTS:
        offset = values["start"].utcoffset() or timedelta()
        if abs(offset) > timedelta(hours=14):
            return [Problem("start", N_("offset beyond ±14:00"))]
    return []
