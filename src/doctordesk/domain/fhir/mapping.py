"""HL7 FHIR R4 (4.0.1) as this service speaks it (docs/fhir.md): the appointment status mapping, references,
search parameters (dates with prefixes, counts, sorts) and OperationOutcome issues, as plain data.

Resources are built as plain dictionaries in FHIR's JSON form; the tests validate every one against the R4 models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from doctordesk.domain import moments
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.texts import N_, Text

FHIR_VERSION = "4.0.1"
MEDIA_TYPE = "application/fhir+json"
# Where the spec's error codes (FIELDS_VALIDATION_ERROR, APPOINTMENT_CHANGED, ...) live in an OperationOutcome.
ERROR_CODE_SYSTEM = "urn:doctordesk:error-code"
# The clinic's own id of an appointment (its external id, as bulk import writes it).
IDENTIFIER_SYSTEM = "urn:doctordesk:appointment-external-id"
# The clinic's own ids of patients and doctors (their external ids, as bulk import writes them).
PATIENT_IDENTIFIER_SYSTEM = "urn:doctordesk:patient-external-id"
PRACTITIONER_IDENTIFIER_SYSTEM = "urn:doctordesk:practitioner-external-id"
# The service an appointment is for (Appointment.serviceType's coding; the ``service-type`` search matches it).
SERVICE_SYSTEM = "urn:doctordesk:service"
CANCEL_REASON_SYSTEM = "http://terminology.hl7.org/CodeSystem/appointment-cancellation-reason"
# A body larger than this is refused before it is parsed (one resource is a few hundred bytes).
MAX_BODY_BYTES = 64 * 1024
DEFAULT_COUNT = 50
MAX_COUNT = 200
MAX_IDENTIFIER_CHARS = 64

# Appointment.status for each of the service's statuses (both pending codes read "pending").
APPOINTMENT_STATUS: dict[Status, str] = {
    Status.REQUESTED: "proposed",
    Status.PENDING_RESPONSE: "pending",
    Status.PENDING_RESPONSE_COVERAGE_RISK: "pending",
    Status.APPROVED: "booked",
    Status.DECLINED: "cancelled",
    Status.CANCELED: "cancelled",
    Status.COMPLETED: "fulfilled",
    Status.NO_SHOW: "noshow",
}

# Every Appointment.status of R4 (a search or a subscription may name any; this service uses those above).
APPOINTMENT_STATUSES = frozenset(
    {"proposed", "pending", "booked", "arrived", "fulfilled", "cancelled", "noshow", "entered-in-error",
     "checked-in", "waitlist"}
)  # fmt: skip

# (patient's, practitioner's, location's) participant status in each appointment status; a cancelled one
# depends on who ended it (``participant_statuses``).
PARTICIPANT_STATUS: dict[str, tuple[str, str, str]] = {
    "proposed": ("accepted", "needs-action", "needs-action"),
    "pending": ("needs-action", "accepted", "accepted"),
    "booked": ("accepted", "accepted", "accepted"),
    "fulfilled": ("accepted", "accepted", "accepted"),
    "noshow": ("declined", "accepted", "accepted"),
}
# Who ended a cancelled appointment: the doctor declined it, the patient or the clinic canceled it.
DECLINED_BY_DOCTOR = "doctor"
CANCELED_BY_PATIENT = "patient"
CANCELED_BY_CLINIC = "clinic"
# This service's own code of how an appointment was cancelled (next to HL7's reason codes).
ENDED_SYSTEM = "urn:doctordesk:cancellation"


def participant_statuses(status: Status, ended_by: str | None) -> tuple[str, str, str]:
    """(patient, practitioner, location) participant statuses: of a cancelled appointment the person who ended it
    declined (the doctor, or the patient; unknown: both) and the place, whose time is free again, always reads
    declined."""
    fhir_status = APPOINTMENT_STATUS[status]
    if fhir_status != "cancelled":
        return PARTICIPANT_STATUS[fhir_status]
    if ended_by == CANCELED_BY_PATIENT:
        return ("declined", "accepted", "declined")
    if ended_by in (DECLINED_BY_DOCTOR, CANCELED_BY_CLINIC):
        return ("accepted", "declined", "declined")
    return ("declined", "declined", "declined")


def statuses_for(fhir_status: str) -> list[int]:
    """The service's status codes behind one Appointment.status; empty for a status this service never uses."""
    return sorted(int(s) for s, name in APPOINTMENT_STATUS.items() if name == fhir_status)


def cancelation_reason(status: Status, reason: str | None, ended_by: str | None = None) -> dict[str, Any] | None:
    """Appointment.cancelationReason: HL7's code of who ended it (``prov`` the doctor or clinic, ``pat`` the
    patient), this service's code (``declined`` or ``canceled``) and the reason given as text."""
    if status is Status.DECLINED:
        coding = [
            {"system": CANCEL_REASON_SYSTEM, "code": "prov", "display": "Provider"},
            {"system": ENDED_SYSTEM, "code": "declined", "display": "Declined by the doctor"},
        ]
        return {"coding": coding, "text": reason or "Declined by the doctor."}
    if status is Status.CANCELED:
        coding = []
        if ended_by == CANCELED_BY_PATIENT:
            coding.append({"system": CANCEL_REASON_SYSTEM, "code": "pat", "display": "Patient"})
        elif ended_by == CANCELED_BY_CLINIC:
            coding.append({"system": CANCEL_REASON_SYSTEM, "code": "prov", "display": "Provider"})
        coding.append({"system": ENDED_SYSTEM, "code": "canceled", "display": "Canceled"})
        return {"coding": coding, "text": reason or "Canceled."}
    return None


def instant(value: datetime) -> str:
    """A FHIR instant/dateTime in UTC with seconds (``2026-11-26T10:00:00Z``)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local_instant(value: datetime, zone: Any) -> str:
    """A FHIR dateTime in a location's local time, with its offset."""
    return value.astimezone(zone).isoformat(timespec="seconds")


# --- references ----------------------------------------------------------------------------------------------

_REFERENCE = re.compile(r"(?:[A-Za-z]+/)?([1-9][0-9]{0,15})", re.ASCII)


def reference_id(value: str, resource_type: str) -> int | None:
    """The id in ``Type/123`` (or a bare ``123`` in a search parameter) when it names ``resource_type``; None
    for anything else (another type, a malformed or an absolute reference)."""
    match = _REFERENCE.fullmatch(value)
    if match is None:
        return None
    if "/" in value and not value.startswith(resource_type + "/"):
        return None
    number = int(match[1])
    return number if number <= MAX_ID else None


def reference(resource_type: str, row_id: int, display: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"reference": f"{resource_type}/{row_id}"}
    if display:
        ref["display"] = display
    return ref


def parse_logical_id(raw: str) -> int | None:
    """A resource's logical id as this service gives them out (digits); None otherwise (read as not found)."""
    return reference_id(raw, "") if raw.isdigit() else None


# --- search parameters ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Range:
    """A half-open range of instants ``[lo, hi)``; None on a side means unbounded."""

    lo: datetime | None = None
    hi: datetime | None = None


_DATE = re.compile(
    r"(eq|ne|gt|lt|ge|le|sa|eb|ap)?"
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?",
    re.ASCII,
)
_NO_OFFSET = N_("A time needs its offset (Z or +hh:mm).")
_OWN_REASONS = (_NO_OFFSET, moments.RANGE_MESSAGE, moments.INSTANT_MESSAGE)


def _precision_span(match: re.Match[str]) -> tuple[datetime, datetime]:
    """The instants a date search value covers at its precision: a year, month, day, minute or second. Years
    outside the accepted range (``domain/moments.py``) are refused before any arithmetic."""
    year, month, day, hour, minute, second, zone = match.groups()[1:]
    if hour is not None and zone is None:
        raise ValueError(_NO_OFFSET)
    if not moments.FIRST_DAY.year <= int(year) <= moments.LAST_DAY.year:
        raise ValueError(moments.RANGE_MESSAGE)
    if hour is None:
        if day is not None:  # a whole day, read as every other door reads one
            read = moments.read_day(f"{year}-{month}-{day}")
            if isinstance(read, str):
                raise ValueError(read)
            lo = moments.day_start(read)
            return lo, lo + timedelta(days=1)
        start = date(int(year), int(month or 1), 1)
        lo = datetime(start.year, start.month, start.day, tzinfo=UTC)
        if month is not None:
            nxt = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
            return lo, datetime(nxt.year, nxt.month, nxt.day, tzinfo=UTC)
        return lo, datetime(start.year + 1, 1, 1, tzinfo=UTC)
    text = f"{year}-{month}-{day}T{hour}:{minute}:{second or '00'}{'+00:00' if zone == 'Z' else zone}"
    read = moments.read_instant(text)
    if isinstance(read, str):
        raise ValueError(read)
    lo = read.astimezone(UTC)
    return lo, lo + (timedelta(seconds=1) if second is not None else timedelta(minutes=1))


@dataclass(frozen=True, slots=True)
class DateTest:
    """One date search value as a test on an instant: inside ``[lo, hi)`` (``inside``), or outside it (``ne``);
    None on a side means unbounded."""

    lo: datetime | None
    hi: datetime | None
    inside: bool = True

    def holds(self, value: datetime) -> bool:
        within = (self.lo is None or value >= self.lo) and (self.hi is None or value < self.hi)
        return within == self.inside


DATE_PREFIXES = ("eq", "ne", "gt", "lt", "ge", "le", "sa", "eb", "ap")
# ``ap``: the value's span widened on both sides by this share of its distance from now (R4 leaves it open).
APPROXIMATE_SHARE = 0.1


def date_tests(values: Sequence[str], *, name: str = "date", now: datetime | None = None) -> list[DateTest]:
    """The tests every ``date`` value makes on a point in time (they are ANDed), each against the value's
    precision (a date without a time is a UTC day): ``eq``/``ne`` inside/outside the span, ``ge``/``le`` from its
    start/to its end, ``gt``/``sa`` after it, ``lt``/``eb`` before it, ``ap`` the span widened by a tenth of its
    distance from ``now``. ValidationFailed naming the parameter for anything else."""
    tests: list[DateTest] = []
    for raw in values:
        match = _DATE.fullmatch(raw)
        if match is None:
            raise ValidationFailed(
                fields={
                    name: Text(
                        "Use a date or dateTime with offset, prefixed by {prefixes}.", prefixes=", ".join(DATE_PREFIXES)
                    )
                }
            )
        try:
            start, end = _precision_span(match)
        except ValueError as error:
            reason = str(error) if error.args and error.args[0] in _OWN_REASONS else N_("Not a date.")
            raise ValidationFailed(fields={name: reason}) from None
        prefix = match[1] or "eq"
        if prefix == "ap":
            margin = abs(start - (now or start)) * APPROXIMATE_SHARE
            tests.append(DateTest(start - margin, end + margin))
            continue
        low, high = {
            "eq": (start, end),
            "ne": (start, end),
            "ge": (start, None),
            "gt": (end, None),
            "sa": (end, None),
            "lt": (None, start),
            "eb": (None, start),
            "le": (None, end),
        }[prefix]
        tests.append(DateTest(low, high, inside=prefix != "ne"))
    return tests


def date_range(
    values: Sequence[str], *, name: str = "date", now: datetime | None = None, ne: bool | None = None
) -> Range:
    """The range of instants that every ``date`` value allows (see ``date_tests``), for searches that need one
    range. ``ne`` cuts a hole into a range: it is refused here (NotSupported naming the parameter) unless
    ``ne=False`` (the caller applies those tests itself; the range is the envelope of the others)."""
    lo: datetime | None = None
    hi: datetime | None = None
    for test in date_tests(values, name=name, now=now):
        if not test.inside:
            if ne is False:
                continue
            raise NotSupported(fields={name: N_("The prefix ne is not supported on this parameter.")})
        if test.lo is not None:
            lo = test.lo if lo is None else max(lo, test.lo)
        if test.hi is not None:
            hi = test.hi if hi is None else min(hi, test.hi)
    return Range(lo, hi)


def count(values: Sequence[str]) -> int:
    """``_count``: 0 (no entries, only the total where one is counted) to MAX_COUNT (a larger one is trimmed to
    the maximum, as FHIR lets a server do)."""
    if not values:
        return DEFAULT_COUNT
    raw = values[-1]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 6:
        raise ValidationFailed(
            fields={"_count": Text("Use a whole number from 0 to {max_count}.", max_count=MAX_COUNT)}
        )
    return min(int(raw), MAX_COUNT)


def token_list(values: Sequence[str]) -> list[str]:
    """A token parameter's values: repeated parameters are ANDed, commas inside one are ORed (here: one list)."""
    out: list[str] = []
    for raw in values:
        out.extend(v for v in raw.split(",") if v)
    return out


# --- OperationOutcome ----------------------------------------------------------------------------------------

# OperationOutcome.issue.code for each of the spec's error codes (IssueType value set).
ISSUE_TYPE: dict[str, str] = {
    "FIELDS_VALIDATION_ERROR": "invalid",
    "NOT_FOUND": "not-found",
    "UNAUTHORIZED": "login",
    "FORBIDDEN": "forbidden",
    "APPOINTMENT_CHANGED": "conflict",
    "INVALID_TRANSITION": "business-rule",
    "IDEMPOTENCY_KEY_REUSED": "duplicate",
    "PAYLOAD_TOO_LARGE": "too-costly",
    "TOO_MANY_REQUESTS": "throttled",
    "SERVICE_BUSY": "transient",
    "NOT_SUPPORTED": "not-supported",
    "PRECONDITION_FAILED": "conflict",
    "INTERNAL_ERROR": "exception",
}


def issue(
    code: str,
    message: str,
    *,
    severity: str = "error",
    expression: str | None = None,
    issue_type: str | None = None,
) -> dict[str, Any]:
    """One OperationOutcome issue carrying the spec's ``code`` in ``details``."""
    item: dict[str, Any] = {
        "severity": severity,
        "code": issue_type or ISSUE_TYPE.get(code, "processing"),
        "details": {"coding": [{"system": ERROR_CODE_SYSTEM, "code": code}], "text": message},
    }
    if expression:
        item["expression"] = [expression]
    return item


def outcome(issues: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"resourceType": "OperationOutcome", "issue": [dict(i) for i in issues]}


def error_outcome(
    code: str, message: str, fields: Mapping[str, str] | None = None, *, resource_type: str | None = None
) -> dict[str, Any]:
    """The OperationOutcome of a refused request: one issue per field in error (its FHIRPath-like expression),
    or one for the whole request."""
    if not fields:
        return outcome([issue(code, message)])
    prefix = f"{resource_type}." if resource_type else ""
    return outcome([issue(code, text, expression=f"{prefix}{name}") for name, text in fields.items()])
