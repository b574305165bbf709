"""The one reading of dates and times from outside (docs/protocol.md#input-rules): every date, time and instant a
request, a form, a search parameter, an import file or a command line carries is read or checked here, written one
way (a day YYYY-MM-DD, an instant RFC 3339 with uppercase T and Z, a wall time HH:MM), within the years 1900 to
2999 (outside: ``RANGE_MESSAGE``); a wall time on a day in a zone by one clock-change rule (``read_wall``)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from doctordesk.domain.texts import N_, Text

FIRST_DAY = date(1900, 1, 1)
LAST_DAY = date(2999, 12, 31)
EARLIEST = datetime(FIRST_DAY.year, 1, 1, tzinfo=UTC)
END = datetime(LAST_DAY.year + 1, 1, 1, tzinfo=UTC)  # the first instant no longer accepted
MAX_OFFSET = timedelta(hours=14)

RANGE_MESSAGE = N_("Use a date from 1900-01-01 to 2999-12-31 (offsets up to ±14:00).")
# A form's day the web app could not read (docs/web-app.md#dates-in-forms): the reader's clinic format (the
# hint's translation: "TT.MM.JJJJ" in German, as i18n/day_entry.entry_hint gives it) and the API's.
FORM_DAY_MESSAGE = Text("Enter the date as {pattern} (or YYYY-MM-DD).", pattern=Text("DD/MM/YYYY"))
DAY_MESSAGE = N_("A date as YYYY-MM-DD.")
INSTANT_MESSAGE = N_("An instant as YYYY-MM-DDTHH:MM:SS with a zone offset (or Z).")
TIME_MESSAGE = N_("A time as HH:MM (00:00 to 23:59).")

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# One form for every instant from outside: RFC 3339 as FHIR's dateTime writes it, uppercase ``T`` and ``Z`` only
# (RFC 3339 lets a reader take lowercase; we do not, so that no door takes a spelling another refuses), hours
# 00-23, minutes and seconds 00-59 (no 24:00, no leap second), offset minutes 00-59.
_HH_MM = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]"
_SECONDS = r":[0-5][0-9](?:\.[0-9]{1,6})?"
# The accepted years as the API description states them (beside its ``format: date``, which states the calendar).
YEAR_PATTERN = r"^(?:19[0-9]{2}|2[0-9]{3})-"  # years 1900-2999, at the start of a date or a date and time
DAY_PATTERN = YEAR_PATTERN + r"[0-9]{2}-[0-9]{2}$"
# An offset as stated: up to ±14:00.
_OFFSET_PATTERN = r"(?:Z|[+-](?:0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)$"
# An instant as stated: the accepted years, seconds, at most six digits of a fraction, an offset up to ±14:00.
INSTANT_PATTERN = YEAR_PATTERN + r"[0-9]{2}-[0-9]{2}T" + _HH_MM + _SECONDS + _OFFSET_PATTERN
# The same in whole minutes (seconds 00): the starts of requests (integration API).
WHOLE_MINUTE_PATTERN = YEAR_PATTERN + r"[0-9]{2}-[0-9]{2}T" + _HH_MM + r":00(?:\.0{1,6})?" + _OFFSET_PATTERN
# A UTC minute written compactly, YYYYMMDDTHHMMZ: the booking screen's picked start in its URL and form.
STAMP_PATTERN = r"^(?:19[0-9]{2}|2[0-9]{3})[0-9]{4}T(?:[01][0-9]|2[0-3])[0-5][0-9]Z$"
_STAMP = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})T((?:[01][0-9]|2[0-3]))([0-5][0-9])Z", re.ASCII)
# An optional day (a form's or a query's empty value: no bound).
OPTIONAL_DAY_PATTERN = r"^(?:(?:19[0-9]{2}|2[0-9]{3})-[0-9]{2}-[0-9]{2})?$"
# A wall-clock time of day: HH:MM, 00:00 to 23:59 (no seconds, no zone; 24:00 is the next day's 00:00).
TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_TIME = re.compile(TIME_PATTERN[1:-1], re.ASCII)
# RFC 3339 date-time: seconds (optionally a fraction of up to six digits) and a zone offset are required; the
# offset's hours are judged against ±14:00 after the match (``RANGE_MESSAGE``), its minutes here.
_OFFSET = r"(Z|[+-][0-9]{2}:[0-5][0-9])"
_INSTANT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T" + _HH_MM + "(" + _SECONDS + ")" + _OFFSET, re.ASCII)
# The same with seconds optional (FHIR's dateTime and the screens' times allow minutes only).
_INSTANT_MINUTES = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T" + _HH_MM + "(" + _SECONDS + ")?" + _OFFSET, re.ASCII)


def day_problem(value: date) -> str | None:
    """Why ``value`` is outside the accepted days, or None."""
    return None if FIRST_DAY <= value <= LAST_DAY else RANGE_MESSAGE


def instant_problem(value: datetime) -> str | None:
    """Why ``value`` is not an accepted instant (no offset, an offset beyond ±14:00, outside the range), or None.
    The local date is checked before anything moves it, so the check itself cannot overflow."""
    offset = value.utcoffset()
    if offset is None:
        return INSTANT_MESSAGE
    if abs(offset) > MAX_OFFSET or not FIRST_DAY <= value.date() <= LAST_DAY:
        return RANGE_MESSAGE
    return None if EARLIEST <= value.astimezone(UTC) < END else RANGE_MESSAGE


def problem(value: object) -> str | None:
    """The range check for a value a framework parsed: a ``datetime`` as an instant (naive ones by their date), a
    ``date`` as a day; anything else (a ``time`` of day included) has no range to leave."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return day_problem(value.date())
        return instant_problem(value)
    if isinstance(value, date):
        return day_problem(value)
    return None


def read_day(raw: str) -> date | str:
    """A day written YYYY-MM-DD within the range, or why not (``DAY_MESSAGE``: not such a day; ``RANGE_MESSAGE``:
    a year outside it)."""
    if not _DAY.fullmatch(raw):
        return DAY_MESSAGE
    if not FIRST_DAY.year <= int(raw[:4]) <= LAST_DAY.year:
        return RANGE_MESSAGE
    try:
        return date.fromisoformat(raw)
    except ValueError:
        return DAY_MESSAGE


def read_instant(raw: str, *, seconds: bool = True) -> datetime | str:
    """An RFC 3339 instant with its offset within the range (``seconds`` False: the seconds may be left out), or
    why not: ``INSTANT_MESSAGE`` for no offset, a leap second or no such day; ``RANGE_MESSAGE`` for a year
    outside 1900-2999 or an offset beyond ±14:00 (checked before anything converts it)."""
    pattern = _INSTANT if seconds else _INSTANT_MINUTES
    if not pattern.fullmatch(raw):
        return INSTANT_MESSAGE
    if not FIRST_DAY.year <= int(raw[:4]) <= LAST_DAY.year:
        return RANGE_MESSAGE
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return INSTANT_MESSAGE
    return instant_problem(value) or value


def read_time(raw: str) -> time | str:
    """A wall-clock time of day written HH:MM (00:00 to 23:59, no seconds, no zone), or why not
    (``TIME_MESSAGE``)."""
    if not _TIME.fullmatch(raw):
        return TIME_MESSAGE
    return time(int(raw[:2]), int(raw[3:]))


def _exists(day: date, at: time, zone: ZoneInfo) -> bool:
    local = datetime.combine(day, at, tzinfo=zone)
    back = local.astimezone(UTC).astimezone(zone)
    return (back.date(), back.time()) == (day, at)


def is_ambiguous(day: date, at: time, zone: str) -> bool:
    """Whether the wall-clock time happens twice that day in ``zone`` (the clocks go back over it)."""
    tz = ZoneInfo(zone)
    first = datetime.combine(day, at, tzinfo=tz)
    return _exists(day, at, tz) and first.utcoffset() != first.replace(fold=1).utcoffset()


def gap_message(day: date, at: time, zone: str) -> Text:
    """Why ``at`` on ``day`` is refused in ``zone``: the clocks jump over it; the message names the jump (the wall
    time at which they jump and the one they show instead)."""
    tz = ZoneInfo(zone)
    before = datetime.combine(day, at)
    for _ in range(24 * 60):  # the gap's start: a jump is an hour or two in practice, a day at most
        earlier = before - timedelta(minutes=1)
        if earlier.date() != day or _exists(day, earlier.time(), tz):
            break
        before = earlier
    first = datetime.combine(day, at, tzinfo=tz)
    jump = (first.replace(fold=1).utcoffset() or timedelta()) - (first.utcoffset() or timedelta())
    after = before + jump
    return Text(
        "{time} does not exist on {day} in {timezone}: the clocks go from {start} straight to {end} (clock change).",
        time=f"{at:%H:%M}",
        day=day.isoformat(),
        timezone=zone,
        start=f"{before:%H:%M}",
        end=f"{after:%H:%M}",
    )


def read_wall(day: date, at: time, zone: str) -> datetime | Text:
    """A wall-clock time on a local day in an IANA zone as the moment it names (an aware datetime in ``zone``), by
    one rule for every door (docs/protocol.md#input-rules): a time the clocks jump over (the spring gap) is
    refused, ``gap_message`` naming the jump; a time that happens twice (the autumn fold) is its first
    occurrence (``fold=0``, the offset before the clocks go back), and the moment written with its offset says so."""
    tz = ZoneInfo(zone)
    if not _exists(day, at, tz):
        return gap_message(day, at, zone)
    return datetime.combine(day, at, tzinfo=tz)


def parse_stamp(raw: str) -> datetime | None:
    """A UTC minute written YYYYMMDDTHHMMZ (``STAMP_PATTERN``) within the range; None otherwise."""
    match = _STAMP.fullmatch(raw)
    if match is None:
        return None
    day = read_day(f"{match[1]}-{match[2]}-{match[3]}")
    if not isinstance(day, date):
        return None
    value = datetime.combine(day, time(int(match[4]), int(match[5])), tzinfo=UTC)
    return value if instant_problem(value) is None else None


def parse_day(raw: str) -> date | None:
    """``read_day`` without the reason: None for anything not accepted."""
    value = read_day(raw)
    return None if isinstance(value, str) else value


def parse_instant(raw: str, *, seconds: bool = True) -> datetime | None:
    """``read_instant`` without the reason: None for anything not accepted."""
    value = read_instant(raw, seconds=seconds)
    return None if isinstance(value, str) else value


def form_day(raw: str | None, name: str, fields: dict[str, str], *, message: str = DAY_MESSAGE) -> date | None:
    """A form's day field: None when empty; when not an accepted day, None with the reason recorded in ``fields``
    under ``name`` (``message`` for a malformed one, ``RANGE_MESSAGE`` for one outside the range)."""
    if not raw:
        return None
    read = read_day(raw)
    if isinstance(read, str):
        fields.setdefault(name, message if read == DAY_MESSAGE else read)
        return None
    return read


def day_start(day: date) -> datetime:
    """Midnight UTC at the start of ``day`` (a day within the range)."""
    return datetime.combine(day, time.min, tzinfo=UTC)


def clamp(value: datetime) -> datetime:
    """``value`` held inside the range (for the open end of a search computed from an accepted value)."""
    return min(max(value, EARLIEST), END)
