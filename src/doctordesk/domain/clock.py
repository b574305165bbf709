"""Time as a dependency, so rules that depend on "now" are testable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from doctordesk.domain import moments


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock for tests: stays where it is put."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def advance(self, delta: timedelta) -> None:
        self.at += delta


class ShiftedClock:
    """The system clock moved by a fixed amount: it read ``at`` when the system clock read ``since`` and runs on at
    the system clock's pace. The processes a test starts (servers, workers, commands) share one timeline this way
    (``DOCTORDESK_TEST_CLOCK``, docs/development.md#the-moment-a-test-runs-at), whenever each of them starts."""

    def __init__(self, at: datetime, *, since: datetime | None = None) -> None:
        self.offset = at - (since or datetime.now(UTC))

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


def parse_test_clock(value: str) -> ShiftedClock | str:
    """``DOCTORDESK_TEST_CLOCK``: ``<instant>`` (the clock reads it when the process reads the setting) or
    ``<instant>@<unix seconds>`` (the clock read it at that moment of the system clock, so that every process given
    the same value agrees). The instant is RFC 3339 with an offset. A ``ShiftedClock``, or why not."""
    at_text, _, since_text = value.partition("@")
    at = moments.read_instant(at_text)
    if isinstance(at, str):
        return f"{at} Expected <instant>[@<unix seconds>], e.g. 2026-11-30T09:00:00+01:00@1795000000."
    try:
        since = datetime.fromtimestamp(float(since_text), UTC) if since_text else None
    except (ValueError, OverflowError, OSError):
        return "After '@': the system clock's unix seconds, e.g. 1795000000.25."
    return ShiftedClock(at, since=since)


def clock_setting(at: datetime, *, since: datetime | None = None) -> str:
    """The ``DOCTORDESK_TEST_CLOCK`` value for a clock that reads ``at`` at ``since`` (now by default)."""
    return f"{at.isoformat()}@{(since or datetime.now(UTC)).timestamp()!r}"
