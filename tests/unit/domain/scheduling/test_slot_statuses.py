"""The schedule's grid with its statuses (``slot_starts``), the one computation behind free times and FHIR's Slots:
free where nothing overlaps, busy where an approved appointment does, busy-tentative where only offers or holds
do; ``free_starts`` is exactly its free part."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from doctordesk.domain.scheduling.free_times import FreeTimeQuery, SlotStatus, free_starts, slot_starts
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, Busy, Hours

NOW = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
MONDAY = date(2026, 3, 2)
HOURS = [Hours(0, time(8, 0), time(10, 0))]  # Monday 08:00-10:00 Berlin (07:00-09:00 UTC)
QUERY = FreeTimeQuery(1, 1, "Europe/Berlin", MONDAY, MONDAY, duration_minutes=30, step_minutes=30)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 3, 2, hour, minute, tzinfo=UTC)


def test_each_start_is_free_busy_or_tentative_by_what_overlaps_it():
    busy = [
        Busy(1, at(7), at(7, 30), "approved"),  # 08:00 local
        Busy(1, at(7, 45), at(8, 15), "offer", tentative=True),  # overlaps 08:30 and 09:00 local
        Busy(1, at(8), at(8, 30), "approved"),  # 09:00 local: approved and an offer → busy
        Busy(2, at(8, 30), at(9), "another doctor's"),
    ]
    grid = slot_starts(QUERY, now=NOW, horizon=DEFAULT_HORIZON, hours=HOURS, busy=busy)
    assert grid == [
        (at(7), SlotStatus.BUSY),
        (at(7, 30), SlotStatus.TENTATIVE),
        (at(8), SlotStatus.BUSY),
        (at(8, 30), SlotStatus.FREE),
    ]
    free = free_starts(QUERY, now=NOW, horizon=DEFAULT_HORIZON, hours=HOURS, busy=busy)
    assert free == [start for start, status in grid if status == SlotStatus.FREE]


def test_starts_too_soon_are_no_slot_at_all():
    grid = slot_starts(QUERY, now=at(6, 30), horizon=DEFAULT_HORIZON, hours=HOURS, busy=[])
    assert [start for start, _ in grid] == [at(8, 30)]  # the lead time is two hours
