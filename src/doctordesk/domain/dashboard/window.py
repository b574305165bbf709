"""The dashboard's window: the last ``DAYS`` local days of the clinic's zone, today included, and their edges as
UTC instants, so that figures are counted per local day or week in SQL with plain range comparisons."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAYS = 90


def local_midnight(day: date, zone: str) -> datetime:
    """The UTC instant at which ``day`` begins in ``zone`` (a midnight the clocks skip: the first moment after)."""
    local = datetime.combine(day, time(0), ZoneInfo(zone))
    # A wall time in a spring gap converts with the offset before the jump; round trip to land after it.
    return local.astimezone(UTC).astimezone(ZoneInfo(zone)).astimezone(UTC)


def monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True, slots=True)
class Window:
    """``DAYS`` local days ending with ``today`` in ``zone``; ``now`` is the moment the figures are computed at."""

    zone: str
    first_day: date
    today: date
    now: datetime

    @property
    def days(self) -> list[date]:
        return [self.first_day + timedelta(days=i) for i in range((self.today - self.first_day).days + 1)]

    @property
    def day_edges(self) -> list[datetime]:
        """Each day's start in UTC, then the end of today: ``len(days) + 1`` instants."""
        return [local_midnight(d, self.zone) for d in (*self.days, self.today + timedelta(days=1))]

    @property
    def weeks(self) -> list[date]:
        """The Mondays of the weeks the window touches (the first and the last may be partial)."""
        first, last = monday(self.first_day), monday(self.today)
        return [first + timedelta(weeks=i) for i in range((last - first).days // 7 + 1)]

    @property
    def week_edges(self) -> list[datetime]:
        """Each week's start in UTC, clipped to the window, then the end of today."""
        starts = [max(w, self.first_day) for w in self.weeks]
        return [local_midnight(d, self.zone) for d in (*starts, self.today + timedelta(days=1))]

    @property
    def start(self) -> datetime:
        return local_midnight(self.first_day, self.zone)

    @property
    def end(self) -> datetime:
        return local_midnight(self.today + timedelta(days=1), self.zone)


def window_at(now: datetime, zone: str, *, days: int = DAYS) -> Window:
    """The window as of ``now`` (aware): today is ``now``'s local date in ``zone``."""
    today = now.astimezone(ZoneInfo(zone)).date()
    return Window(zone=zone, first_day=today - timedelta(days=days - 1), today=today, now=now)


def bucket(moment: datetime, edges: Sequence[datetime]) -> int | None:
    """The index of the span ``[edges[i], edges[i+1])`` holding ``moment``; None outside them all."""
    i = bisect_right(edges, moment) - 1
    return i if 0 <= i < len(edges) - 1 else None
