"""The reminder rules (domain/reminders.py): windows, the latest opened one only, quiet hours in the location's
zone (both ways, over midnight, across a clock change), and the hours setting's spelling."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from doctordesk.domain.reminders import (
    Quiet,
    ReminderRules,
    due_window,
    format_hours,
    parse_clock_time,
    parse_hours,
    send_moment,
)

BERLIN = ZoneInfo("Europe/Berlin")
START = datetime(2027, 1, 20, 9, 0, tzinfo=UTC)  # 10:00 in Berlin
NIGHT = Quiet(time(21, 0), time(8, 0))
RULES = ReminderRules(enabled=True, hours=(24, 2), quiet=NIGHT)


def due(at: datetime, *, rules: ReminderRules = RULES, sent: frozenset[int] = frozenset(), start=START) -> int | None:
    return due_window(rules, start=start, now=at, zone=BERLIN, sent=sent)


def test_nothing_is_due_before_the_first_window_opens():
    assert due(START - timedelta(hours=24, seconds=1)) is None


def test_each_window_is_due_from_its_hour_until_its_reminder_went():
    assert due(START - timedelta(hours=24)) == 24
    assert due(START - timedelta(hours=3), sent=frozenset({24})) is None
    assert due(START - timedelta(hours=2), sent=frozenset({24})) == 2
    assert due(START - timedelta(hours=1), sent=frozenset({24, 2})) is None


def test_only_the_latest_opened_window_counts():
    assert due(START - timedelta(hours=1)) == 2  # approved late: one reminder, not one per passed window


def test_nothing_is_due_once_it_started_or_when_switched_off():
    assert due(START) is None
    assert due(START - timedelta(hours=2), rules=ReminderRules(False, (24, 2), NIGHT)) is None


def test_a_reminder_in_quiet_hours_goes_at_their_end_when_that_is_before_the_start():
    nominal = START - timedelta(hours=4)  # 06:00 Berlin
    assert send_moment(nominal, start=START, quiet=NIGHT, zone=BERLIN) == START - timedelta(hours=2)  # 08:00


def test_else_it_goes_when_they_begin_the_evening_before():
    start = datetime(2027, 1, 20, 6, 30, tzinfo=UTC)  # 07:30 Berlin
    moved = send_moment(start - timedelta(hours=2), start=start, quiet=NIGHT, zone=BERLIN)
    assert moved == datetime(2027, 1, 19, 20, 0, tzinfo=UTC)  # 21:00 Berlin the evening before


def test_a_reminder_due_at_night_waits_for_the_morning():
    rules = ReminderRules(True, (24,), NIGHT)
    start = datetime(2027, 1, 21, 14, 0, tzinfo=UTC)  # 15:00 Berlin
    approved_at_night = datetime(2027, 1, 20, 22, 30, tzinfo=UTC)  # 23:30 Berlin, inside the window
    assert due(approved_at_night, rules=rules, start=start) is None
    assert due(datetime(2027, 1, 21, 7, 0, tzinfo=UTC), rules=rules, start=start) == 24  # 08:00 Berlin


def test_quiet_hours_within_one_day_and_none():
    lunch = Quiet(time(12, 0), time(14, 0))
    nominal = datetime(2027, 1, 20, 11, 30, tzinfo=UTC)  # 12:30 Berlin
    assert send_moment(nominal, start=START + timedelta(days=1), quiet=lunch, zone=BERLIN) == datetime(
        2027, 1, 20, 13, 0, tzinfo=UTC
    )
    assert send_moment(nominal, start=START, quiet=None, zone=BERLIN) == nominal


def test_quiet_hours_are_wall_times_across_a_clock_change():
    # The night of 28 March 2027 in Berlin loses an hour: 08:00 is then 06:00 UTC, not 07:00.
    start = datetime(2027, 3, 28, 10, 0, tzinfo=UTC)  # 12:00 CEST
    moved = send_moment(datetime(2027, 3, 28, 3, 0, tzinfo=UTC), start=start, quiet=NIGHT, zone=BERLIN)
    assert moved == datetime(2027, 3, 28, 6, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "hours"), [("24,2", (24, 2)), ("2, 24", (24, 2)), ("48,48,1", (48, 1)), ("336", (336,))]
)
def test_the_hours_are_whole_hours_largest_first(raw, hours):
    assert parse_hours(raw) == hours
    assert parse_hours(format_hours(hours)) == hours


@pytest.mark.parametrize("raw", ["", "0", "337", "24,x", "1.5", "-2", "1,2,3,4,5,6,7", ","])
def test_other_hours_are_refused_with_words(raw):
    with pytest.raises(ValueError, match="Whole hours from 1 to 336"):
        parse_hours(raw)


@pytest.mark.parametrize("raw", ["24:00", "9:00", "21:00:00", "2100", "21:00Z"])
def test_quiet_hours_are_read_as_hh_mm(raw):
    with pytest.raises(ValueError, match="HH:MM"):
        parse_clock_time(raw)
    assert parse_clock_time("21:00") == time(21, 0)
