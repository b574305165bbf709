"""The waitlist's rules as plain Python (docs/waitlist.md): what an entry asks for, which free times match it, in
which order entries are served, and the clinic's policy (one-at-a-time or all-at-once, direct moves)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from doctordesk.domain import moments
from doctordesk.domain.inputs import parse_id
from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.domain.texts import N_, Text

# A patient waits for at most this many things at once: more is not waiting but blocking others' offers.
MAX_ENTRIES = 5
# How far ahead ``until`` may be: the matcher looks through every free time up to it.
MAX_DAYS_AHEAD = 90
ALL_DAYS = 0b1111111  # Monday is bit 0, as ``date.weekday()``
DAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_FROM, DEFAULT_TO = time(0, 0), time(23, 59)


class Mode(StrEnum):
    ONE_AT_A_TIME = "one-at-a-time"
    ALL_AT_ONCE = "all-at-once"


class EntryState(StrEnum):
    WAITING = "waiting"
    LEFT = "left"
    SERVED = "served"  # an offer of it was accepted
    EXPIRED = "expired"  # its last day passed (ended by the round after it)


class OfferState(StrEnum):
    OPEN = "open"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"
    GONE = "gone"  # someone else took the time, or it is no longer free


@dataclass(frozen=True, slots=True)
class Policy:
    """The clinic's waitlist policy (read through ``services/waitlist/policy.policy``)."""

    mode: Mode
    offer_minutes: int
    direct_move: bool


@dataclass(frozen=True, slots=True)
class Wish:
    """What a patient waits for: a doctor (None: any doctor) at a location for a service, on some weekdays between
    two local times, up to ``until`` (inclusive), optionally earlier than an appointment they hold."""

    doctor_id: int | None
    location_id: int
    service: str
    until: date
    days: int = ALL_DAYS
    time_from: time = DEFAULT_FROM
    time_to: time = DEFAULT_TO
    appointment_id: int | None = None


@dataclass(frozen=True, slots=True)
class Waiting:
    """An entry as the matcher sees it: the wish, whose it is, since when, and the start of the appointment held
    (a time must be earlier to be offered)."""

    id: int
    patient_id: int
    wish: Wish
    joined_at: datetime
    held_start: datetime | None = None


def _time(raw: str | None, default: time) -> time | str:
    """A time of day by the one reader (``moments.read_time``), or why not; empty: ``default``."""
    return default if raw is None or raw == "" else moments.read_time(raw)


def parse_days(form: Mapping[str, str]) -> int:
    """The weekdays ticked (``days-mon`` … ``days-sun``, a Checkbox's ``true``); none ticked means every day."""
    days = sum(1 << i for i, key in enumerate(DAY_KEYS) if form.get(f"days-{key}", "") in ("true", "on", "1"))
    return days or ALL_DAYS


def parse_wish(form: Mapping[str, str], *, today: date) -> Wish:
    """The wish a joining form spells, or ``WishProblems`` naming each field that is wrong."""
    fields: dict[str, str] = {}
    raw_doctor = form.get("doctor", "")
    doctor = None if raw_doctor in ("", "any") else parse_id(raw_doctor)
    if raw_doctor not in ("", "any") and doctor is None:
        fields["doctor"] = N_("Choose a doctor.")
    location = parse_id(form.get("location"))
    if location is None:
        fields["location"] = N_("Choose a location.")
    service = form.get("service", "")
    if service not in SERVICES:
        fields["service"] = N_("Choose a service.")
    read = moments.read_day(form.get("until", ""))
    until = read if isinstance(read, date) else None
    if isinstance(read, str):
        fields["until"] = read
    elif until is not None and until < today:
        fields["until"] = N_("Must not be in the past.")
    elif until is not None and until > today + timedelta(days=MAX_DAYS_AHEAD):
        fields["until"] = Text("At most {count} days from today.", count=MAX_DAYS_AHEAD)
    read_from, read_to = _time(form.get("from"), DEFAULT_FROM), _time(form.get("to"), DEFAULT_TO)
    time_from = read_from if isinstance(read_from, time) else None
    time_to = read_to if isinstance(read_to, time) else None
    if isinstance(read_from, str):
        fields["from"] = read_from
    if isinstance(read_to, str):
        fields["to"] = read_to
    elif time_from is not None and time_to is not None and time_to <= time_from:
        fields["to"] = N_("Must be after the start time.")
    raw_held = form.get("appointment", "")
    held = parse_id(raw_held) if raw_held else None
    if raw_held and held is None:
        fields["appointment"] = N_("Choose one of your appointments.")
    if fields:
        raise WishProblems(fields)
    assert location is not None and until is not None and time_from is not None and time_to is not None
    return Wish(doctor, location, service, until, parse_days(form), time_from, time_to, held)


class WishProblems(Exception):
    def __init__(self, fields: dict[str, str]) -> None:
        self.fields = fields
        super().__init__(fields)


def matches(
    waiting: Waiting, *, doctor_id: int, location_id: int, start: datetime, minutes: int, timezone: str
) -> bool:
    """Whether a free time of ``doctor_id`` at ``location_id`` suits the entry: its doctor (or any), its place, one
    of its weekdays and inside its times (local to the location), no later than its last day, and earlier than
    the appointment the patient holds."""
    wish = waiting.wish
    if wish.location_id != location_id or (wish.doctor_id is not None and wish.doctor_id != doctor_id):
        return False
    local = start.astimezone(ZoneInfo(timezone))
    end = local + timedelta(minutes=minutes)
    if not wish.days & (1 << local.weekday()) or local.date() > wish.until:
        return False
    if local.time() < wish.time_from or end.date() != local.date() or end.time() > wish.time_to:
        return False
    return waiting.held_start is None or start < waiting.held_start


def in_order(entries: list[Waiting]) -> list[Waiting]:
    """The order of waiting: who joined first (the entry's id breaks a tie of the same instant)."""
    return sorted(entries, key=lambda w: (w.joined_at, w.id))


def offer_expiry(policy: Policy, *, now: datetime, start: datetime) -> datetime:
    """When an offer made now for a time starting ``start`` ends unanswered: one-at-a-time, after the offer
    minutes (never after the time starts); all-at-once, when the time starts (the first to accept wins)."""
    if policy.mode is Mode.ALL_AT_ONCE:
        return start
    return min(now + timedelta(minutes=policy.offer_minutes), start)


def days_label(days: int) -> list[str]:
    """The day keys set in ``days`` (Monday first)."""
    return [key for i, key in enumerate(DAY_KEYS) if days & (1 << i)]
