"""When time alone next changes what a screen shows: its next *edge*.

A page stays what it is until an event on its topics or until such a moment, whichever comes first; its state
token carries the moment (docs/realtime.md#how-long-a-page-holds). The screens' own rules (which section an
appointment is in, the "Today" badge, the lead time, an offer or a free time running out) change only at moments
these functions name, so a page rendered at ``now`` is the page any render before its edge would give.

Pure functions of the data and ``now`` (an aware datetime): no clock is read here. An edge is always later than
``now``; None means no moment changes it. Erring early only costs a render; an edge later than the real change
would show a stale page, so each function names the first moment at which its rule's answer can differ.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def earliest(moments: Iterable[datetime | None], *, after: datetime) -> datetime | None:
    """The first of ``moments`` later than ``after`` (None when there is none)."""
    ahead = [m for m in moments if m is not None and m > after]
    return min(ahead) if ahead else None


def midnight(day: date, timezone: str) -> datetime:
    """The moment ``day`` begins in ``timezone``, in UTC. Where the clocks skip midnight, the moment they jump
    (the day begins then); where midnight comes twice, its first time."""
    return datetime.combine(day, time(0), tzinfo=ZoneInfo(timezone)).astimezone(UTC)


def next_midnight(now: datetime, timezone: str) -> datetime:
    """The moment the next day begins in ``timezone`` after ``now``: when "today" there moves on."""
    today = now.astimezone(ZoneInfo(timezone)).date()
    return midnight(today + timedelta(days=1), timezone)


def today_edge(moment: datetime, timezone: str, now: datetime) -> datetime | None:
    """When "``moment`` is today in ``timezone``" next turns over: the midnight its day begins (while that day is
    ahead), the midnight it ends (while it is today), never once it is past."""
    zone = ZoneInfo(timezone)
    day, today = moment.astimezone(zone).date(), now.astimezone(zone).date()
    if day > today:
        return midnight(day, timezone)
    if day == today:
        return midnight(day + timedelta(days=1), timezone)
    return None


def appointment_edge(start: datetime, end: datetime, now: datetime) -> datetime | None:
    """When an appointment next moves on: it starts (upcoming → under way, a request or an offer runs out), it
    ends (under way → past)."""
    return earliest((start, end), after=now)


def offsets_edge(moments: Iterable[datetime], offsets: Iterable[timedelta], now: datetime) -> datetime | None:
    """The first moment ``offset`` before one of ``moments`` that is still ahead, for every offset: when a rule
    of the form "``moment`` is less than ``offset`` ahead" (the lead time, a notice period, the booking horizon;
    an offset of zero: the moment has come) first turns for one of them."""
    spans = tuple(offsets)
    return earliest((m - o for m in moments for o in spans), after=now)


def expiry_edge(expiries: Iterable[datetime | None], now: datetime) -> datetime | None:
    """When the first of ``expiries`` still ahead comes: a time held until then (a FHIR ``$hold``) is free from that
    moment on (held while ``expires > now``)."""
    return earliest(expiries, after=now)


def next_utc_midnight(now: datetime) -> datetime:
    """When UTC's date moves on (rules that read ``now.date()`` of a UTC clock)."""
    return midnight(now.astimezone(UTC).date() + timedelta(days=1), "UTC")
