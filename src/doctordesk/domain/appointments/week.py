"""The doctor's week (docs/week-view.md): which days a week view shows, the free times left in the work hours, and
where each entry sits on the grid — its day and minutes in the doctor's zone, and its lane beside the entries it
overlaps. Pure: the service reads the appointments, offers and hours, the screen renders what this places."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from doctordesk.domain.scheduling.suggestions import ExceptionKind, Hours, HoursException, local_to_utc

DAYS_IN_WEEK = 7
DEFAULT_HOURS = (8, 18)  # the hours shown when nothing is placed
MINUTES_IN_DAY = 24 * 60

Interval = tuple[datetime, datetime]


class Kind(StrEnum):
    APPOINTMENT = "appointment"  # approved
    REQUEST = "request"  # awaiting the doctor's decision
    OFFER = "offer"  # an alternative waiting for the patient's answer
    FREE = "free"  # work hours with nothing approved or offered


@dataclass(frozen=True, slots=True)
class Item:
    """One thing on the doctor's calendar, in UTC."""

    kind: Kind
    start: datetime
    end: datetime
    appointment_id: int | None = None
    offer_n: int | None = None
    who: str = ""  # the patient's name
    service: str = ""
    location: str = ""  # the location's name
    confirmed: bool = False  # the patient said they will come (a reminder's link)


@dataclass(frozen=True, slots=True)
class Placed:
    """An item's part on one day of the grid: minutes from the doctor's local midnight, and its lane among the
    items it overlaps (free times lie behind everything and have no lane)."""

    item: Item
    day: date
    start_minute: int
    end_minute: int
    lane: int = 0
    lanes: int = 1


@dataclass(frozen=True, slots=True)
class Workplace:
    """A doctor's weekly hours at one location, with the location's zone and name."""

    location_id: int
    name: str
    timezone: str
    hours: tuple[Hours, ...]


def days_shown(anchor: date, *, one_day: bool) -> tuple[date, ...]:
    """The week (Monday to Sunday) holding ``anchor``, or only ``anchor`` on a phone."""
    if one_day:
        return (anchor,)
    monday = anchor - timedelta(days=anchor.weekday())
    return tuple(monday + timedelta(days=i) for i in range(DAYS_IN_WEEK))


def week_over(
    places: Sequence[Workplace], week: Sequence[date], exceptions: Sequence[HoursException], *, zone: str, now: datetime
) -> bool:
    """Whether the doctor's work in ``week`` (its days in the doctor's zone) is over at ``now``: they have weekly
    hours somewhere, and none of the week's work hours (extra days counted, holidays and absences not) is still
    ahead. A doctor without any hours has no week that ends this way."""
    if not any(place.hours for place in places):
        return False
    lo, hi = window(week, zone)
    ahead = max(lo, now)
    return not any(
        start < hi and ahead < end for place in places for start, end in work_intervals(place, week, exceptions)
    )


def opening_day(
    today: date, places: Sequence[Workplace], exceptions: Sequence[HoursException], *, zone: str, now: datetime
) -> date:
    """The day the week view opens on when none is asked: today, or next Monday once this week's work is over
    (``week_over``: a Saturday, a Sunday evening, a Friday after the last hour), so the doctor lands on the week
    ahead of them rather than one with nothing left to do."""
    week = days_shown(today, one_day=False)
    return week[-1] + timedelta(days=1) if week_over(places, week, exceptions, zone=zone, now=now) else today


def day_bounds(day: date, zone: str) -> Interval:
    """The UTC instants of ``day``'s local midnight and the next one in ``zone`` (23 or 25 hours at a clock
    change)."""
    tz = ZoneInfo(zone)
    start = datetime.combine(day, time.min, tzinfo=tz).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz).astimezone(UTC)
    return start, end


def window(days: Sequence[date], zone: str) -> Interval:
    """The UTC span the shown days cover in the doctor's zone."""
    return day_bounds(days[0], zone)[0], day_bounds(days[-1], zone)[1]


def subtract(intervals: Iterable[Interval], cuts: Iterable[Interval]) -> list[Interval]:
    """What is left of ``intervals`` outside every cut."""
    left = sorted(intervals)
    for cut_start, cut_end in sorted(cuts):
        kept: list[Interval] = []
        for start, end in left:
            if cut_end <= start or end <= cut_start:
                kept.append((start, end))
                continue
            if start < cut_start:
                kept.append((start, cut_start))
            if cut_end < end:
                kept.append((cut_end, end))
        left = kept
    return left


def _local(day: date, opens: time, closes: time, zone: str) -> Interval | None:
    start, end = local_to_utc(day, opens, zone), local_to_utc(day, closes, zone)
    return (start, end) if start is not None and end is not None and start < end else None


def work_intervals(place: Workplace, days: Sequence[date], exceptions: Sequence[HoursException]) -> list[Interval]:
    """The doctor's work hours at ``place`` as UTC intervals on the location's local days around ``days`` (a day
    either side, for a location in another zone than the doctor): the weekly blocks and a day's extra blocks, none
    on a holiday or a whole-day absence, a partial absence cut out."""
    blocks: list[Interval] = []
    cuts: list[Interval] = []
    day = days[0] - timedelta(days=1)
    while day <= days[-1] + timedelta(days=1):
        today = [e for e in exceptions if e.applies(day, place.location_id)]
        whole_day_off = any(
            e.kind == ExceptionKind.HOLIDAY
            or (e.kind == ExceptionKind.ABSENCE and (e.opens is None or e.closes is None))
            for e in today
        )
        if not whole_day_off:
            spans = [(h.opens, h.closes) for h in place.hours if h.weekday == day.weekday()]
            spans += [(e.opens, e.closes) for e in today if e.kind == ExceptionKind.EXTRA and e.opens and e.closes]
            blocks += [b for opens, closes in spans if (b := _local(day, opens, closes, place.timezone))]
            absent = [(e.opens, e.closes) for e in today if e.kind == ExceptionKind.ABSENCE and e.opens and e.closes]
            cuts += [c for opens, closes in absent if (c := _local(day, opens, closes, place.timezone))]
        day += timedelta(days=1)
    return subtract(blocks, cuts)


def free_items(
    places: Sequence[Workplace],
    days: Sequence[date],
    exceptions: Sequence[HoursException],
    taken: Sequence[Item],
    *,
    zone: str,
    now: datetime,
) -> list[Item]:
    """The free times of the shown days: work hours from now on, less what is approved or offered (a request
    awaiting a decision does not take its time until it is approved, so it shows in front of free time)."""
    lo, hi = window(days, zone)
    lo = max(lo, now)
    busy = [(i.start, i.end) for i in taken if i.kind in (Kind.APPOINTMENT, Kind.OFFER)]
    out: list[Item] = []
    for place in places:
        for start, end in subtract(work_intervals(place, days, exceptions), busy):
            start, end = max(start, lo), min(end, hi)
            if start < end:
                out.append(Item(Kind.FREE, start, end, location=place.name))
    return out


def _minute(moment: datetime, day_start: datetime, day_end: datetime, zone: ZoneInfo) -> int:
    if moment >= day_end:
        return MINUTES_IN_DAY
    if moment <= day_start:
        return 0
    local = moment.astimezone(zone)
    return local.hour * 60 + local.minute


def _lanes(day_items: list[Placed]) -> list[Placed]:
    """Side by side: each run of overlapping items gets as many lanes as it needs, each item the first lane free
    at its start."""
    ordered = sorted(day_items, key=lambda p: (p.start_minute, -p.end_minute, p.item.kind, p.item.appointment_id or 0))
    out: list[Placed] = []
    group: list[Placed] = []
    group_end = -1
    for p in [*ordered, None]:
        if p is None or p.start_minute >= group_end:
            lanes = 1 + max((g.lane for g in group), default=0)
            out += [replace(g, lanes=lanes) for g in group]
            group, group_end = [], -1
            if p is None:
                break
        ends = [max((g.end_minute for g in group if g.lane == n), default=-1) for n in range(len(group) + 1)]
        lane = next(n for n, end in enumerate(ends) if end <= p.start_minute)
        group.append(replace(p, lane=lane))
        group_end = max(group_end, p.end_minute)
    return out


def place(items: Iterable[Item], days: Sequence[date], zone: str) -> dict[date, list[Placed]]:
    """Each item on the days it touches (split at local midnight), in the doctor's zone; per day the free times
    first (in lanes of their own: two locations' hours may overlap), then the rest in start order with their
    lanes."""
    tz = ZoneInfo(zone)
    out: dict[date, list[Placed]] = {}
    items = list(items)
    for day in days:
        day_start, day_end = day_bounds(day, zone)
        here = [
            Placed(i, day, _minute(i.start, day_start, day_end, tz), _minute(i.end, day_start, day_end, tz))
            for i in items
            if i.start < day_end and day_start < i.end
        ]
        here = [p for p in here if p.start_minute < p.end_minute]
        free = _lanes([p for p in here if p.item.kind is Kind.FREE])
        out[day] = free + _lanes([p for p in here if p.item.kind is not Kind.FREE])
    return out


def hour_span(placed: Mapping[date, Sequence[Placed]]) -> tuple[int, int]:
    """The hours the grid shows: from the earliest placed hour to the end of the latest, at least the default
    day when nothing is placed."""
    everything = [p for day in placed.values() for p in day]
    if not everything:
        return DEFAULT_HOURS
    first = min(p.start_minute for p in everything) // 60
    last = -(-max(p.end_minute for p in everything) // 60)
    return min(first, DEFAULT_HOURS[0]), max(last, DEFAULT_HOURS[1])
