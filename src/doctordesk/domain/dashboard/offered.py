"""Offered hours: how many minutes a doctor was open for booking on each day of the window, from their weekly
hours (wall-clock times of each location) and the dated exceptions (docs/dashboard.md#booked-share)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time

from doctordesk.domain.scheduling.suggestions import ExceptionKind, Hours, HoursException


def _minutes(opens: time, closes: time) -> int:
    return max(0, (datetime.combine(date.min, closes) - datetime.combine(date.min, opens)).seconds // 60)


def _minus(spans: list[tuple[int, int]], cut: tuple[int, int]) -> list[tuple[int, int]]:
    out = []
    for lo, hi in spans:
        if cut[1] <= lo or hi <= cut[0]:
            out.append((lo, hi))
            continue
        if lo < cut[0]:
            out.append((lo, cut[0]))
        if cut[1] < hi:
            out.append((cut[1], hi))
    return out


def _at(t: time) -> int:
    return t.hour * 60 + t.minute


def day_minutes(day: date, location_id: int, hours: Sequence[Hours], exceptions: Sequence[HoursException]) -> int:
    """Minutes offered on ``day`` at ``location_id``: the weekday's blocks, none on a holiday or a whole-day
    absence, less a partial absence, plus extra hours. Wall-clock minutes: a clock change does not lengthen or
    shorten them (the hours are written on the wall clock)."""
    today = [e for e in exceptions if e.applies(day, location_id)]
    if any(
        e.kind == ExceptionKind.HOLIDAY or (e.kind == ExceptionKind.ABSENCE and (e.opens is None or e.closes is None))
        for e in today
    ):
        return 0
    spans = [(_at(h.opens), _at(h.opens) + _minutes(h.opens, h.closes)) for h in hours if h.weekday == day.weekday()]
    spans += [
        (_at(e.opens), _at(e.opens) + _minutes(e.opens, e.closes))
        for e in today
        if e.kind == ExceptionKind.EXTRA and e.opens is not None and e.closes is not None
    ]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    for e in today:
        if e.kind == ExceptionKind.ABSENCE and e.opens is not None and e.closes is not None:
            merged = _minus(merged, (_at(e.opens), _at(e.opens) + _minutes(e.opens, e.closes)))
    return sum(hi - lo for lo, hi in merged)


def offered_minutes(
    days: Iterable[date],
    hours_by_location: Mapping[int, Sequence[Hours]],
    exceptions: Sequence[HoursException],
) -> int:
    """A doctor's offered minutes over ``days`` at every location they have hours at (an extra exception at a
    location without weekly hours counts too)."""
    locations = set(hours_by_location) | {e.location_id for e in exceptions if e.location_id is not None}
    days = list(days)
    return sum(
        day_minutes(d, loc, hours_by_location.get(loc, ()), exceptions) for loc in sorted(locations) for d in days
    )
