"""An hours exception's times as the moments they name at each location it applies to (docs/administration.md,
"Clock changes"): the one rule of ``domain/moments.read_wall``. A time the clocks jump over that day (the spring
gap) is refused, the message naming the jump; a time they pass twice (the autumn fold) is its first occurrence,
and the answer writes each time with its offset, so that which one was meant is never a guess."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain import moments
from doctordesk.domain.scheduling.suggestions import HoursException


@dataclass(frozen=True, slots=True)
class ExceptionTimes:
    """An exception's opening and closing at one location: ISO 8601 with the location's offset that day."""

    location_id: int
    opens: str
    closes: str


def _locations(e: HoursException, zones: Mapping[int, str]) -> list[int]:
    """The locations the exception applies to (every one when it names none), with a known zone."""
    ids = [e.location_id] if e.location_id is not None else sorted(zones)
    return [i for i in ids if i in zones]


def time_errors(exception: HoursException, zones: Mapping[int, str]) -> dict[str, str]:
    """``opens``/``closes`` that do not exist on the exception's day at a location it applies to (``zones``:
    location id → IANA zone), each with ``moments.gap_message``; nothing for an exception without times."""
    errors: dict[str, str] = {}
    for name, at in (("opens", exception.opens), ("closes", exception.closes)):
        if at is None:
            continue
        for location_id in _locations(exception, zones):
            read = moments.read_wall(exception.day, at, zones[location_id])
            if not isinstance(read, datetime):
                errors[name] = read
                break
    return errors


def exception_times(exception: HoursException, zones: Mapping[int, str]) -> list[ExceptionTimes]:
    """The exception's times as moments with their offsets at each location it applies to (an exception without
    times, or with one the clocks jump over, has none)."""
    if exception.opens is None or exception.closes is None:
        return []
    out = []
    for location_id in _locations(exception, zones):
        opens = moments.read_wall(exception.day, exception.opens, zones[location_id])
        closes = moments.read_wall(exception.day, exception.closes, zones[location_id])
        if isinstance(opens, datetime) and isinstance(closes, datetime):
            out.append(ExceptionTimes(location_id, opens.isoformat(), closes.isoformat()))
    return out
