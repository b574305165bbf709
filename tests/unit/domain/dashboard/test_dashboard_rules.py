"""The dashboard's rules (docs/dashboard.md): the window's local days and weeks across a clock change, offered
minutes from weekly hours and exceptions, the nearest-rank percentile and shares without a whole."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from doctordesk.domain.dashboard.figures import percentile, share
from doctordesk.domain.dashboard.offered import day_minutes, offered_minutes
from doctordesk.domain.dashboard.window import bucket, window_at
from doctordesk.domain.scheduling.suggestions import Hours, HoursException

MONDAYS = [Hours(0, time(8), time(12))]


def test_the_window_is_90_local_days_ending_today_in_the_clinics_zone():
    w = window_at(datetime(2026, 11, 22, 23, 30, tzinfo=UTC), "Europe/Berlin")  # 00:30 on the 23rd in Berlin
    assert (w.first_day, w.today, len(w.days)) == (date(2026, 8, 26), date(2026, 11, 23), 90)
    edges = w.day_edges
    assert edges[0] == datetime(2026, 8, 25, 22, 0, tzinfo=UTC)  # summer time: midnight is 22:00 UTC
    assert edges[-1] == datetime(2026, 11, 23, 23, 0, tzinfo=UTC)  # winter time: 23:00 UTC
    assert bucket(datetime(2026, 11, 22, 23, 30, tzinfo=UTC), edges) == 89
    assert bucket(datetime(2026, 8, 25, 21, 59, tzinfo=UTC), edges) is None


def test_the_weeks_start_on_monday_and_the_first_is_clipped_to_the_window():
    w = window_at(datetime(2026, 11, 23, 7, 0, tzinfo=UTC), "Europe/Berlin")
    assert w.weeks[0] == date(2026, 8, 24) and w.weeks[-1] == date(2026, 11, 23) and len(w.weeks) == 14
    assert w.week_edges[0] == w.day_edges[0] and w.week_edges[1] == datetime(2026, 8, 30, 22, 0, tzinfo=UTC)


def test_a_day_offers_its_weekly_hours_less_absences_plus_extras():
    monday, saturday = date(2026, 11, 16), date(2026, 11, 21)
    assert day_minutes(monday, 1, MONDAYS, []) == 240
    assert day_minutes(saturday, 1, MONDAYS, []) == 0
    assert day_minutes(monday, 1, MONDAYS, [HoursException(monday, "holiday")]) == 0
    assert day_minutes(monday, 1, MONDAYS, [HoursException(monday, "absence")]) == 0
    partial = HoursException(monday, "absence", None, time(11), time(13))
    assert day_minutes(monday, 1, MONDAYS, [partial]) == 180
    extra = HoursException(saturday, "extra", 1, time(10), time(12))
    assert day_minutes(saturday, 1, MONDAYS, [extra]) == 120
    assert day_minutes(saturday, 2, MONDAYS, [extra]) == 0  # another location's exception
    overlapping = HoursException(monday, "extra", 1, time(11), time(13))
    assert day_minutes(monday, 1, MONDAYS, [overlapping]) == 300  # counted once where it overlaps


def test_offered_minutes_add_every_location_and_none_without_hours():
    days = [date(2026, 11, 16), date(2026, 11, 17)]
    assert offered_minutes(days, {1: MONDAYS, 2: [Hours(1, time(9), time(10))]}, []) == 300
    assert offered_minutes(days, {}, []) == 0


def test_the_percentile_is_a_value_that_occurred_by_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([10, 2, 4], 50) == 4 and percentile([10, 2, 4], 90) == 10
    assert percentile([1, 2], 50) == 1 and percentile(list(range(1, 11)), 90) == 9


def test_a_share_of_nothing_is_no_share():
    assert share(1, 0) is None and share(1.5, 49) == 3.1 and share(0, 7) == 0.0
