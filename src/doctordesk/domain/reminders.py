"""Reminders before an approved appointment, as rules (docs/notifications.md#reminders): the hours before the
start at which they go, quiet hours in the location's zone, and which reminder (if any) is due at a moment.

Pure functions of the appointment's start, the clinic's settings and "now", so a test puts the clock at the
moments and asks.

Decisions:
- Each configured number of hours is a *window*: the window of ``h`` hours opens at ``start - h`` (moved out of
  the quiet hours, below). At a moment, the window that counts is the *latest opened* one (the fewest hours):
  a reminder goes for it unless one went for it already. So an appointment approved inside a window gets that
  window's reminder at once, and only that one (never one per window already passed).
- Quiet hours ``[begin, end)`` in the location's zone (they may span midnight): a reminder that falls in them
  goes at their end when that is still before the start; else at their beginning (earlier, the evening before),
  so the patient is reminded before the appointment rather than not at all. While the quiet hours last, a
  reminder that became due meanwhile (an approval at night) waits for their end the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from doctordesk.domain import moments
from doctordesk.domain.texts import N_

MAX_HOURS = 24 * 14  # two weeks ahead at most
MAX_WINDOWS = 6
HOURS_PROBLEM = N_("Whole hours from 1 to 336, comma-separated, at most 6 (e.g. 24,2).")
QUIET_PROBLEM = N_("Quiet hours need both their start and their end, or neither.")


def parse_hours(raw: str) -> tuple[int, ...]:
    """``"24,2"`` → ``(24, 2)`` (largest first, no repeats); ValueError with a clear message otherwise."""
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if not parts or len(parts) > MAX_WINDOWS:
        raise ValueError(HOURS_PROBLEM)
    hours: set[int] = set()
    for part in parts:
        if not part.isdigit() or not 1 <= int(part) <= MAX_HOURS:
            raise ValueError(HOURS_PROBLEM)
        hours.add(int(part))
    return tuple(sorted(hours, reverse=True))


def format_hours(hours: Sequence[int]) -> str:
    return ",".join(str(h) for h in hours)


def parse_clock_time(raw: str) -> time:
    """``"21:00"`` → 21:00 (the one reader of wall-clock times, ``moments.read_time``); ValueError with its
    message otherwise."""
    read = moments.read_time(raw.strip())
    if isinstance(read, str):
        raise ValueError(read)
    return read


@dataclass(frozen=True, slots=True)
class Quiet:
    """Quiet hours from ``begin`` to ``end`` (local times; ``begin > end`` spans midnight)."""

    begin: time
    end: time

    def contains(self, local: datetime) -> bool:
        t = local.time().replace(tzinfo=None)
        if self.begin <= self.end:
            return self.begin <= t < self.end
        return t >= self.begin or t < self.end

    def span(self, local: datetime) -> tuple[datetime, datetime]:
        """The quiet period that holds ``local`` (it must): its beginning and end as local datetimes."""
        day = local.date()
        if self.begin > self.end and local.time().replace(tzinfo=None) < self.end:
            day -= timedelta(days=1)  # the small hours belong to the evening before
        begin = datetime.combine(day, self.begin, tzinfo=local.tzinfo)
        end_day = day + timedelta(days=1) if self.begin > self.end else day
        return begin, datetime.combine(end_day, self.end, tzinfo=local.tzinfo)


@dataclass(frozen=True, slots=True)
class ReminderRules:
    enabled: bool
    hours: tuple[int, ...]
    quiet: Quiet | None


def _local(at: datetime, zone: ZoneInfo) -> datetime:
    return at.astimezone(zone)


def send_moment(nominal: datetime, *, start: datetime, quiet: Quiet | None, zone: ZoneInfo) -> datetime:
    """When a reminder nominally due at ``nominal`` goes, quiet hours considered (module docstring)."""
    if quiet is None or not quiet.contains(_local(nominal, zone)):
        return nominal
    begin, end = quiet.span(_local(nominal, zone))
    end_utc = _at(end, zone)
    return end_utc if end_utc < start else _at(begin, zone)


def _at(local: datetime, zone: ZoneInfo) -> datetime:
    """A naive-in-zone local time to the aware instant (a wall time skipped by a clock change moves forward)."""
    naive = local.replace(tzinfo=None)
    return naive.replace(tzinfo=zone).astimezone(ZoneInfo("UTC"))


def due_window(
    rules: ReminderRules, *, start: datetime, now: datetime, zone: ZoneInfo, sent: frozenset[int]
) -> int | None:
    """The window (its hours) whose reminder goes now, or None: off, started, nothing opened yet, the latest
    opened window's reminder already sent (``sent``: the windows sent for this start), or held by quiet hours."""
    if not rules.enabled or not rules.hours or now >= start:
        return None
    opened = [
        h
        for h in rules.hours
        if send_moment(start - timedelta(hours=h), start=start, quiet=rules.quiet, zone=zone) <= now
    ]
    if not opened:
        return None
    latest = min(opened)
    if latest in sent:
        return None
    if rules.quiet is not None and rules.quiet.contains(_local(now, zone)):
        _, end = rules.quiet.span(_local(now, zone))
        if _at(end, zone) < start:
            return None  # it waits for the end of the quiet hours, which come before the start
    return latest


def horizon(rules: ReminderRules) -> timedelta:
    """How far ahead a reminder can be due: the largest window and a day for quiet hours moving it earlier."""
    return timedelta(hours=max(rules.hours, default=0)) + timedelta(days=1)
