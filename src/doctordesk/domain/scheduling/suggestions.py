"""Suggested Scheduling: parsing and checking the alternatives a doctor proposes (spec 4.4, rules 1-12).

Two steps, both pure:

1. ``parse_cards`` turns the raw card fields (as typed) into ``Proposal``s, interpreting date and time in the
   entry timezone (the doctor's profile timezone, or the one the doctor confirmed), and reports format and
   completeness errors per form field (``date~2``...).
2. ``check_proposals`` applies the rules that need facts from storage, handed in as plain data: lead time from an
   injected ``now``, work hours at the location in the location's timezone (weekly blocks and dated exceptions),
   overlaps with the doctor's booked appointments and open offers (duration-aware), overlaps and exact duplicates
   between the alternatives.

Error messages are keyed by the form field the doctor has to change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, available_timezones

from doctordesk.domain import moments
from doctordesk.domain.inputs import parse_id
from doctordesk.domain.texts import N_, Text

MAX_ALTERNATIVES = 3
LEAD_TIME = timedelta(hours=2)
# How far ahead a request or an offer may be (the clinic's setting DOCTORDESK_BOOKING_HORIZON_DAYS, config.py):
# its default, and the most it may be set to (ten years keep every time far inside domain/moments.py's range).
DEFAULT_HORIZON = timedelta(days=365)
MAX_HORIZON = timedelta(days=3650)
# Appointments are at most this long; the overlap query looks back this far (an index range, not a scan).
MAX_DURATION = timedelta(hours=8)

# A wall-clock time as HH:MM (00:00 to 23:59): what parse_time reads (``domain/moments.py``), as the API
# description states it.
HH_MM_PATTERN = moments.TIME_PATTERN


def field(name: str, number: int) -> str:
    """The form field name of one card's input: ``field("date", 2)`` → ``date~2``."""
    return f"{name}~{number}"


@dataclass(frozen=True, slots=True)
class CardInput:
    """One card's fields as the doctor typed them (strings; empty when not filled)."""

    doctor: str = ""
    location: str = ""
    date: str = ""
    time: str = ""

    @property
    def is_blank(self) -> bool:
        return not (self.date.strip() or self.time.strip())


@dataclass(frozen=True, slots=True)
class Proposal:
    """A complete, well-formed alternative: who, where, and when (UTC)."""

    n: int
    doctor_id: int
    location_id: int
    start: datetime
    duration_minutes: int

    @property
    def end(self) -> datetime:
        return self.start + timedelta(minutes=self.duration_minutes)

    def same_slot(self, other: Proposal) -> bool:
        return (self.doctor_id, self.location_id, self.start) == (other.doctor_id, other.location_id, other.start)


@dataclass(frozen=True, slots=True)
class Busy:
    """A time the doctor is already taken: an approved appointment, an open offer of another appointment, or a time
    held for a booking system (``tentative``: it may still come free, as an offer the patient rejects or a hold that
    expires)."""

    doctor_id: int
    start: datetime
    end: datetime
    what: str  # for the message: "an approved appointment", "an offer sent for another appointment"
    tentative: bool = False
    expires: datetime | None = None  # when it stops taking the time by itself (a hold); None: only by an event


@dataclass(frozen=True, slots=True)
class Hours:
    """A doctor's hours at a location on a weekday (0 = Monday), local wall-clock times."""

    weekday: int
    opens: time
    closes: time


class ExceptionKind:
    HOLIDAY = "holiday"  # no hours that day
    ABSENCE = "absence"  # no hours that day, or none between opens and closes when given
    EXTRA = "extra"  # hours opens-closes added that day

    ALL = (HOLIDAY, ABSENCE, EXTRA)


@dataclass(frozen=True, slots=True)
class HoursException:
    """A dated exception to a doctor's weekly hours, on a local date of the location (every location of the
    doctor when ``location_id`` is None)."""

    day: date
    kind: str
    location_id: int | None = None
    opens: time | None = None
    closes: time | None = None

    def applies(self, day: date, location_id: int) -> bool:
        return self.day == day and (self.location_id is None or self.location_id == location_id)


@dataclass(frozen=True, slots=True)
class Directory:
    """Who and where can be chosen on a card: doctor ids and location ids with their timezones."""

    doctors: Mapping[int, str]  # id → display name
    locations: Mapping[int, str]  # id → IANA timezone


# The IANA zone names this system knows, the only ones accepted (and listed as such in /openapi.json).
TIMEZONES: tuple[str, ...] = tuple(sorted(available_timezones()))
_TIMEZONE_SET = frozenset(TIMEZONES)


def is_timezone(name: str) -> bool:
    return name in _TIMEZONE_SET


def timezone_names() -> list[str]:
    """The IANA zones offered by the timezone selector."""
    return sorted(z for z in available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/")))


def parse_date(raw: str) -> date | None:
    """A card's date (YYYY-MM-DD within the accepted range, ``domain/moments.py``); None otherwise."""
    return moments.parse_day(raw.strip())


def parse_time(raw: str) -> time | None:
    """A card's time (HH:MM, ``domain/moments.py``); None otherwise."""
    read = moments.read_time(raw.strip())
    return None if isinstance(read, str) else read


def local_to_utc(day: date, at: time, timezone: str) -> datetime | None:
    """The UTC instant of a local wall-clock time by ``moments.read_wall``'s rule: None when that time does not
    exist (spring-forward gap); an ambiguous time (the repeated hour in autumn) means its first occurrence
    (``fold=0``)."""
    local = moments.read_wall(day, at, timezone)
    return local.astimezone(UTC) if isinstance(local, datetime) else None


def utc_to_local(moment: datetime, timezone: str) -> datetime:
    return moment.astimezone(ZoneInfo(timezone))


@dataclass
class Parsed:
    proposals: list[Proposal]
    errors: dict[str, str]
    incomplete: set[int]  # cards with a missing field (no error shown until submitted)


def parse_card(
    number: int, card: CardInput, *, timezone: str, duration_minutes: int, directory: Directory, submitted: bool
) -> tuple[Proposal | None, dict[str, str], bool]:
    """Parse one card. Returns the proposal (None when incomplete or invalid), errors by field, and whether a
    required field is empty. Empty fields are errors only on submission (``submitted``); while editing they just
    keep Approve disabled."""
    errors: dict[str, str] = {}
    missing = False
    doctor_id = parse_id(card.doctor)
    if not card.doctor.strip():
        missing = True
        if submitted:
            errors[field("profile", number)] = N_("Choose a doctor.")
    elif doctor_id is None or doctor_id not in directory.doctors:
        errors[field("profile", number)] = N_("Choose a doctor from the list.")
    location_id = parse_id(card.location)
    if not card.location.strip():
        missing = True
        if submitted:
            errors[field("location", number)] = N_("Choose a location.")
    elif location_id is None or location_id not in directory.locations:
        errors[field("location", number)] = N_("Choose a location from the list.")
    day = parse_date(card.date)
    if not card.date.strip():
        missing = True
        if submitted:
            errors[field("date", number)] = N_("Enter a date.")
    elif day is None:
        out_of_range = moments.read_day(card.date.strip()) == moments.RANGE_MESSAGE
        errors[field("date", number)] = moments.RANGE_MESSAGE if out_of_range else moments.FORM_DAY_MESSAGE
    at = parse_time(card.time)
    if not card.time.strip():
        missing = True
        if submitted:
            errors[field("time", number)] = N_("Enter a time.")
    elif at is None:
        errors[field("time", number)] = N_("Use the time format HH:MM (24 hours).")
    if errors or missing or doctor_id is None or location_id is None or day is None or at is None:
        return None, errors, missing
    local = moments.read_wall(day, at, timezone)
    if not isinstance(local, datetime):
        return None, {field("time", number): local}, False
    return Proposal(number, doctor_id, location_id, local.astimezone(UTC), duration_minutes), {}, False


def parse_cards(
    cards: Sequence[CardInput], *, timezone: str, duration_minutes: int, directory: Directory, submitted: bool
) -> Parsed:
    """Parse cards 1..k. A fourth card is refused."""
    result = Parsed([], {}, set())
    for i, card in enumerate(cards):
        n = i + 1
        if n > MAX_ALTERNATIVES:
            result.errors[field("date", n)] = Text("At most {count} alternatives.", count=MAX_ALTERNATIVES)
            continue
        proposal, errors, missing = parse_card(
            n, card, timezone=timezone, duration_minutes=duration_minutes, directory=directory, submitted=submitted
        )
        result.errors.update(errors)
        if missing:
            result.incomplete.add(n)
        if proposal is not None:
            result.proposals.append(proposal)
    return result


@dataclass(frozen=True, slots=True)
class Original:
    """The request being decided (an alternative equal to it means approving it)."""

    doctor_id: int
    location_id: int
    start: datetime


def is_original(proposal: Proposal, original: Original) -> bool:
    return (proposal.doctor_id, proposal.location_id, proposal.start) == (
        original.doctor_id,
        original.location_id,
        original.start,
    )


def within_hours(
    proposal: Proposal, timezone: str, hours: Sequence[Hours], exceptions: Sequence[HoursException] = ()
) -> bool:
    """Whether the whole appointment lies inside one block of work hours, in the location's local time, on its
    local date: the weekly blocks of that weekday plus the day's extra blocks, none on a holiday or a whole-day
    absence, and never overlapping a partial absence. Wall-clock times of the location, so a clock change
    moves the weekly hours with the clock; an exception's times are the moments ``moments.read_wall`` makes of
    them on its day (a time the clocks pass twice is its first occurrence), so an extra hour on the night the
    clocks go back is that hour once, not both."""
    local_start = utc_to_local(proposal.start, timezone)
    local_end = utc_to_local(proposal.end, timezone)
    day = local_start.date()
    if local_end.date() != day:
        return False
    starts, ends = local_start.time(), local_end.time()
    today = [e for e in exceptions if e.applies(day, proposal.location_id)]
    blocks = [(h.opens, h.closes) for h in hours if h.weekday == day.weekday()]
    spans: list[tuple[datetime, datetime]] = []
    for e in today:
        if e.kind == ExceptionKind.HOLIDAY or (
            e.kind == ExceptionKind.ABSENCE and (e.opens is None or e.closes is None)
        ):
            return False
        if e.opens is None or e.closes is None:
            continue
        lo, hi = local_to_utc(day, e.opens, timezone), local_to_utc(day, e.closes, timezone)
        if e.kind == ExceptionKind.EXTRA:
            if lo is not None and hi is not None:
                spans.append((lo, hi))
            else:  # a time in a gap (stored before the rule refused it): its wall-clock reading
                blocks.append((e.opens, e.closes))
        if e.kind == ExceptionKind.ABSENCE:
            if lo is not None and hi is not None:
                if overlaps(proposal.start, proposal.end, lo, hi):
                    return False
            elif starts < e.closes and e.opens < ends:
                return False
    return any(opens <= starts and ends <= closes for opens, closes in blocks) or any(
        lo <= proposal.start and proposal.end <= hi for lo, hi in spans
    )


def overlaps(a_start: datetime, a_end: datetime, b_start: datetime, b_end: datetime) -> bool:
    return a_start < b_end and b_start < a_end


def too_early(start: datetime, now: datetime) -> bool:
    """Whether ``start`` is less than the lead time ahead of ``now``."""
    return start < now + LEAD_TIME


def beyond_horizon(start: datetime, now: datetime, horizon: timedelta) -> bool:
    """Whether ``start`` is further ahead of ``now`` than the clinic's booking horizon."""
    return start > now + horizon


def horizon_message(horizon: timedelta) -> str:
    return Text("Propose a time at most {count} days from now.", count=horizon.days)


def check_proposals(
    proposals: Sequence[Proposal],
    *,
    now: datetime,
    horizon: timedelta,
    original: Original,
    directory: Directory,
    work_hours: Mapping[tuple[int, int], Sequence[Hours]],
    busy: Sequence[Busy],
    exceptions: Mapping[int, Sequence[HoursException]] | None = None,
) -> dict[str, str]:
    """The rules that need facts: errors by field (empty when every proposal may be sent). The one check of a
    wanted time every entry point applies (Review and Approve's alternatives, the integration API's requests and
    reschedules, FHIR, the booking screen): lead time, the booking ``horizon``, work hours, overlaps.

    An alternative equal to the original request is the request itself (auto-approval): lead time, horizon and
    work hours do not apply to it, as they do not to approving the request as proposed.
    """
    errors: dict[str, str] = {}

    def put(name: str, n: int, message: str) -> None:
        errors.setdefault(field(name, n), message)

    for p in proposals:
        if is_original(p, original):
            continue
        if too_early(p.start, now):
            put("time", p.n, N_("Propose a time at least 2 hours from now."))
            continue
        if beyond_horizon(p.start, now, horizon):
            put("date", p.n, horizon_message(horizon))
            continue
        timezone = directory.locations[p.location_id]
        hours = work_hours.get((p.doctor_id, p.location_id), ())
        if not within_hours(p, timezone, hours, (exceptions or {}).get(p.doctor_id, ())):
            doctor = directory.doctors.get(p.doctor_id) or Text("The doctor")
            put(
                "time",
                p.n,
                Text("Outside {doctor}'s work hours at this location ({timezone}).", doctor=doctor, timezone=timezone),
            )
            continue
        for b in busy:
            if b.doctor_id == p.doctor_id and overlaps(p.start, p.end, b.start, b.end):
                put(
                    "time",
                    p.n,
                    Text("Overlaps {what} ({time}).", what=b.what, time=f"{utc_to_local(b.start, timezone):%H:%M}"),
                )
                break
    for i, p in enumerate(proposals):
        for q in proposals[:i]:
            if p.same_slot(q):
                put("time", p.n, Text("Same doctor, location, date and time as alternative {n}.", n=q.n))
            elif p.doctor_id == q.doctor_id and overlaps(p.start, p.end, q.start, q.end):
                put("time", p.n, Text("Overlaps alternative {n}.", n=q.n))
    return errors


def windows(proposals: Sequence[Proposal]) -> list[tuple[int, datetime, datetime]]:
    """(doctor, from, to) ranges of ``start`` the overlap query must read: one bounded index range per
    proposal (an appointment starting before ``from`` ends before the proposal starts)."""
    return [(p.doctor_id, p.start - MAX_DURATION, p.end) for p in proposals]


@dataclass(frozen=True, slots=True)
class Schedule:
    """A doctor's hours as a whole: weekly blocks per (doctor, location) and dated exceptions per doctor."""

    hours: Mapping[tuple[int, int], Sequence[Hours]]
    exceptions: Mapping[int, Sequence[HoursException]]

    def allows(self, proposal: Proposal, timezone: str) -> bool:
        hours = self.hours.get((proposal.doctor_id, proposal.location_id), ())
        return within_hours(proposal, timezone, hours, self.exceptions.get(proposal.doctor_id, ()))


def left_outside(
    booked: Sequence[Proposal], timezones: Mapping[int, str], *, before: Schedule, after: Schedule
) -> list[Proposal]:
    """The booked appointments a change of hours would leave outside them: inside the hours before, outside
    after (one that was already outside, e.g. a request approved as proposed, is not the change's doing)."""
    out = []
    for p in booked:
        timezone = timezones.get(p.location_id)
        if timezone is not None and before.allows(p, timezone) and not after.allows(p, timezone):
            out.append(p)
    return out


def hours_errors(blocks: Sequence[Hours]) -> dict[str, str]:
    """Weekly blocks that make sense: weekday 0-6, whole minutes, opening before closing, no two overlapping on one
    weekday. Errors keyed ``rules.{i}``."""
    errors: dict[str, str] = {}
    for i, h in enumerate(blocks):
        key = f"rules.{i}"
        if not 0 <= h.weekday <= 6:
            errors[key] = N_("weekday is 0 (Monday) to 6 (Sunday).")
        elif not _whole_minutes(h.opens) or not _whole_minutes(h.closes):
            errors[key] = N_("Use HH:MM times without seconds or zone.")
        elif not h.opens < h.closes:
            errors[key] = N_("opens must be before closes.")
        elif any(o.weekday == h.weekday and h.opens < o.closes and o.opens < h.closes for o in blocks[:i]):
            errors[key] = N_("Overlaps another block on the same weekday.")
    return errors


def exception_errors(exception: HoursException) -> dict[str, str]:
    """A dated exception that makes sense: a known kind; a holiday has no times, an extra day needs both, an
    absence both or none; opening before closing."""
    if exception.kind not in ExceptionKind.ALL:
        return {"kind": N_("Use holiday, absence or extra.")}
    timed = (exception.opens is not None, exception.closes is not None)
    if exception.kind == ExceptionKind.HOLIDAY and any(timed):
        return {"opens": N_("A holiday has no times.")}
    if exception.kind == ExceptionKind.EXTRA and not all(timed):
        return {"opens" if exception.opens is None else "closes": N_("An extra day needs opens and closes.")}
    if exception.kind == ExceptionKind.ABSENCE and any(timed) and not all(timed):
        return {"opens" if exception.opens is None else "closes": N_("Give both times, or neither for the whole day.")}
    if exception.opens is not None and exception.closes is not None:
        if not _whole_minutes(exception.opens) or not _whole_minutes(exception.closes):
            return {"opens": N_("Use HH:MM times without seconds or zone.")}
        if not exception.opens < exception.closes:
            return {"closes": N_("closes must be after opens.")}
    return {}


def _whole_minutes(t: time) -> bool:
    return t.second == 0 and t.microsecond == 0 and t.tzinfo is None
