"""The one reading of dates and times from outside (docs/protocol.md#input-rules): every date, time and instant a
request, a form, a search parameter, an import file or a command line carries is read or checked here, within the
years 1900 to 2999 (outside: ``RANGE_MESSAGE``)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

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

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# The accepted years as the API description states them (beside its ``format: date``, which states the calendar).
YEAR_PATTERN = r"^(?:19[0-9]{2}|2[0-9]{3})-"  # years 1900-2999, at the start of a date or a date and time
DAY_PATTERN = YEAR_PATTERN + r"[0-9]{2}-[0-9]{2}$"
# An instant as stated: the accepted years, seconds, at most six digits of a fraction, an offset up to ±14:00.
INSTANT_PATTERN = (
    YEAR_PATTERN + r"[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
    r"(?:[Zz]|[+-](?:0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)$"
)
# RFC 3339 date-time: seconds (optionally a fraction of up to six digits) and a zone offset are required.
_INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?([Zz]|[+-][0-9]{2}:[0-9]{2})", re.ASCII
)
# The same with seconds optional (FHIR's dateTime and the screens' times allow minutes only).
_INSTANT_MINUTES = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?([Zz]|[+-][0-9]{2}:[0-9]{2})",
    re.ASCII,
)


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
        value = datetime.fromisoformat(raw.upper())
    except ValueError:
        return INSTANT_MESSAGE
    return instant_problem(value) or value


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
