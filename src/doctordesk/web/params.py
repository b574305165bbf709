"""Path and query parameter types that follow the input rules (domain/inputs.py) instead of the framework's lax
parsing, which takes ``+1``, `` 1``, ``1_0`` as numbers and ``0`` as the date 1970-01-01.

Each is ``Annotated[..., Path(...) or Query(...), STRICT_...]``: the ``Path``/``Query`` carries the documented
range into /openapi.json, the validator refuses every other spelling (422 FIELDS_VALIDATION_ERROR naming the
parameter). The validator comes after ``Path``/``Query`` so that the schema keeps ``minimum``/``maximum``.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from doctordesk.domain import moments
from doctordesk.domain.inputs import MAX_ID, parse_int
from doctordesk.domain.texts import N_

STRICT_INT_MESSAGE = N_("A whole number from {minimum} to {maximum} in digits 0-9 (no sign, spaces or leading zeros).")
STRICT_DATE_MESSAGE = moments.DAY_MESSAGE
STRICT_INSTANT_MESSAGE = moments.INSTANT_MESSAGE
# Each refusal's template by its error type: the error handler writes it in the reader's language from the values
# the error carries (``web/field_messages.py``).
MESSAGES = {
    "strict_int": STRICT_INT_MESSAGE,
    "strict_date": STRICT_DATE_MESSAGE,
    "strict_instant": STRICT_INSTANT_MESSAGE,
    "strict_time": moments.TIME_MESSAGE,
    "date_range": moments.RANGE_MESSAGE,
}


def strict_int(*, minimum: int = 1, maximum: int = MAX_ID) -> BeforeValidator:
    """A validator reading a parameter's text with ``parse_int`` (ASCII digits in ``minimum..maximum``)."""

    def check(value: Any) -> int:
        parsed = parse_int(value, minimum=minimum, maximum=maximum) if isinstance(value, str) else None
        if parsed is None:
            raise PydanticCustomError("strict_int", STRICT_INT_MESSAGE, {"minimum": minimum, "maximum": maximum})
        return parsed

    return BeforeValidator(check)


def _check_date(value: Any) -> date:
    read = moments.read_day(value) if isinstance(value, str) else STRICT_DATE_MESSAGE
    if isinstance(read, date):
        return read
    if read == moments.RANGE_MESSAGE:
        raise PydanticCustomError("date_range", read)
    raise PydanticCustomError("strict_date", STRICT_DATE_MESSAGE)


def _check_instant(value: Any) -> datetime:
    read = moments.read_instant(value) if isinstance(value, str) else STRICT_INSTANT_MESSAGE
    if isinstance(read, datetime):
        return read
    if read == moments.RANGE_MESSAGE:
        raise PydanticCustomError("date_range", read)
    raise PydanticCustomError("strict_instant", STRICT_INSTANT_MESSAGE)


STRICT_ID = strict_int()
STRICT_DATE = BeforeValidator(_check_date)
# The accepted years in the description of a date parameter: ``Query(..., json_schema_extra=DAY_IN_RANGE)``.
DAY_IN_RANGE: dict[str, Any] = {"pattern": moments.DAY_PATTERN}
# The same for an instant parameter (the UTC edges are the reader's alone).
YEARS: dict[str, Any] = {"pattern": moments.INSTANT_PATTERN}
STRICT_INSTANT = BeforeValidator(_check_instant)


def _check_time(value: Any) -> time:
    read = moments.read_time(value) if isinstance(value, str) else moments.TIME_MESSAGE
    if isinstance(read, time):
        return read
    raise PydanticCustomError("strict_time", moments.TIME_MESSAGE)


STRICT_TIME = BeforeValidator(_check_time)

# The types of the dates and times of JSON bodies: read by the one reader (domain/moments.py), never by pydantic's
# own parsing (which takes ``1790000000`` as an instant, a space for ``T``, ``+1400`` as an offset, a date and
# time where a day is expected, keeping the date).
Day = Annotated[date, STRICT_DATE]
"""A day: YYYY-MM-DD within the accepted range."""
Instant = Annotated[datetime, STRICT_INSTANT]
"""An instant: RFC 3339 with seconds and a zone offset (uppercase ``T`` and ``Z``), within the accepted range."""
WallTime = Annotated[time, STRICT_TIME]
"""A wall-clock time of day: HH:MM, 00:00 to 23:59."""
