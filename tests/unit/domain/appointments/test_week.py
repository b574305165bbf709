"""The week view's placing rules (``domain/appointments/week.py``): the days shown, free times from work hours less
what is approved or offered, lanes for overlapping entries, days in the doctor's zone across a clock change."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from doctordesk.domain.appointments.week import (
    Item,
    Kind,
    Workplace,
    days_shown,
    free_items,
    hour_span,
    opening_day,
    place,
    subtract,
    week_over,
)
from doctordesk.domain.scheduling.suggestions import ExceptionKind, Hours, HoursException

BERLIN = "Europe/Berlin"
MONDAY = date(2026, 11, 23)


def utc(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=UTC)


def test_a_desktop_shows_monday_to_sunday_and_a_phone_the_day():
    assert days_shown(date(2026, 11, 26), one_day=False) == tuple(MONDAY + timedelta(days=i) for i in range(7))
    assert days_shown(date(2026, 11, 26), one_day=True) == (date(2026, 11, 26),)


def test_subtract_cuts_holes_and_ends():
    a = (utc(MONDAY, 8), utc(MONDAY, 16))
    assert subtract([a], [(utc(MONDAY, 9), utc(MONDAY, 10)), (utc(MONDAY, 15), utc(MONDAY, 17))]) == [
        (utc(MONDAY, 8), utc(MONDAY, 9)),
        (utc(MONDAY, 10), utc(MONDAY, 15)),
    ]


def test_free_times_are_the_work_hours_less_approved_and_offered_times_but_not_requests():
    place_ = Workplace(1, "Mitte", BERLIN, (Hours(0, time(8), time(12)),))  # Mondays 08-12 Berlin (07-11 UTC)
    taken = [
        Item(Kind.APPOINTMENT, utc(MONDAY, 8), utc(MONDAY, 8, 30), 1, who="A"),
        Item(Kind.OFFER, utc(MONDAY, 9), utc(MONDAY, 9, 30), 2, 1, who="B"),
        Item(Kind.REQUEST, utc(MONDAY, 10), utc(MONDAY, 10, 30), 3, who="C"),
    ]
    free = free_items([place_], days_shown(MONDAY, one_day=True), [], taken, zone=BERLIN, now=utc(MONDAY, 0))
    assert [(f.start, f.end) for f in free] == [
        (utc(MONDAY, 7), utc(MONDAY, 8)),
        (utc(MONDAY, 8, 30), utc(MONDAY, 9)),
        (utc(MONDAY, 9, 30), utc(MONDAY, 11)),
    ]
    assert {f.location for f in free} == {"Mitte"}
    # From now on only, and nothing on a holiday.
    later = free_items([place_], (MONDAY,), [], taken, zone=BERLIN, now=utc(MONDAY, 10))
    assert [(f.start, f.end) for f in later] == [(utc(MONDAY, 10), utc(MONDAY, 11))]
    holiday = [HoursException(MONDAY, ExceptionKind.HOLIDAY)]
    assert free_items([place_], (MONDAY,), holiday, [], zone=BERLIN, now=utc(MONDAY, 0)) == []
    absent = [HoursException(MONDAY, ExceptionKind.ABSENCE, 1, time(9), time(11))]
    assert [(f.start, f.end) for f in free_items([place_], (MONDAY,), absent, [], zone=BERLIN, now=utc(MONDAY, 0))] == [
        (utc(MONDAY, 7), utc(MONDAY, 8)),
        (utc(MONDAY, 10), utc(MONDAY, 11)),
    ]


def test_overlapping_entries_share_the_width_in_lanes_and_the_rest_keep_it_whole():
    items = [
        Item(Kind.APPOINTMENT, utc(MONDAY, 8), utc(MONDAY, 9), 1),
        Item(Kind.REQUEST, utc(MONDAY, 8, 30), utc(MONDAY, 9, 30), 2),
        Item(Kind.OFFER, utc(MONDAY, 9), utc(MONDAY, 10), 3, 1),  # lane 0 is free again at 09:00 (UTC = 10:00 Berlin)
        Item(Kind.APPOINTMENT, utc(MONDAY, 12), utc(MONDAY, 13), 4),
    ]
    (day,) = place(items, (MONDAY,), BERLIN).values()
    lanes = {p.item.appointment_id: (p.lane, p.lanes, p.start_minute, p.end_minute) for p in day}
    assert lanes[1] == (0, 2, 9 * 60, 10 * 60)
    assert lanes[2] == (1, 2, 9 * 60 + 30, 10 * 60 + 30)
    assert lanes[3] == (0, 2, 10 * 60, 11 * 60)
    assert lanes[4] == (0, 1, 13 * 60, 14 * 60)
    assert hour_span({MONDAY: day}) == (8, 18)


def test_an_entry_over_midnight_is_split_and_days_follow_the_clock_change():
    late = Item(Kind.APPOINTMENT, utc(MONDAY, 22), utc(MONDAY + timedelta(days=1), 0), 1)  # 23:00-01:00 Berlin
    placed = place([late], (MONDAY, MONDAY + timedelta(days=1)), BERLIN)
    assert [(p.start_minute, p.end_minute) for p in placed[MONDAY]] == [(23 * 60, 24 * 60)]
    assert [(p.start_minute, p.end_minute) for p in placed[MONDAY + timedelta(days=1)]] == [(0, 60)]
    assert hour_span(placed) == (0, 24)
    # 29 Mar 2026: Berlin moves from 02:00 to 03:00; 09:00 local is 07:00 UTC that day.
    spring = date(2026, 3, 29)
    (p,) = place([Item(Kind.REQUEST, utc(spring, 7), utc(spring, 7, 30), 2)], (spring,), BERLIN)[spring]
    assert (p.start_minute, p.end_minute) == (9 * 60, 9 * 60 + 30)


# --- which week the view opens on (``week_over``, ``opening_day``) ---------------------------------------------

WEEKDAYS_8_TO_17 = Workplace(1, "Mitte", BERLIN, tuple(Hours(d, time(8), time(17)) for d in range(5)))
THIS_WEEK = days_shown(MONDAY, one_day=False)
NEXT_MONDAY = MONDAY + timedelta(weeks=1)


def berlin(day: date, hour: int, minute: int = 0) -> datetime:
    return utc(day, hour - 1, minute)  # CET in November


def test_the_week_is_over_once_its_last_work_hour_has_ended():
    friday = MONDAY + timedelta(days=4)
    assert not week_over([WEEKDAYS_8_TO_17], THIS_WEEK, [], zone=BERLIN, now=berlin(friday, 16, 59))
    assert week_over([WEEKDAYS_8_TO_17], THIS_WEEK, [], zone=BERLIN, now=berlin(friday, 17))
    assert week_over([WEEKDAYS_8_TO_17], THIS_WEEK, [], zone=BERLIN, now=berlin(friday + timedelta(days=2), 23, 55))


def test_an_extra_day_on_saturday_keeps_the_week_open_and_a_holiday_on_friday_ends_it_on_thursday():
    saturday, friday, thursday = MONDAY + timedelta(days=5), MONDAY + timedelta(days=4), MONDAY + timedelta(days=3)
    extra = [HoursException(saturday, ExceptionKind.EXTRA, None, time(9), time(12))]
    assert not week_over([WEEKDAYS_8_TO_17], THIS_WEEK, extra, zone=BERLIN, now=berlin(saturday, 8))
    holiday = [HoursException(friday, ExceptionKind.HOLIDAY)]
    assert week_over([WEEKDAYS_8_TO_17], THIS_WEEK, holiday, zone=BERLIN, now=berlin(thursday, 18))


def test_the_view_opens_on_next_week_when_this_weeks_work_is_over_else_today():
    saturday, wednesday = MONDAY + timedelta(days=5), MONDAY + timedelta(days=2)
    assert opening_day(saturday, [WEEKDAYS_8_TO_17], [], zone=BERLIN, now=berlin(saturday, 10)) == NEXT_MONDAY
    assert opening_day(wednesday, [WEEKDAYS_8_TO_17], [], zone=BERLIN, now=berlin(wednesday, 20)) == wednesday


def test_a_doctor_without_work_hours_stays_on_this_week():
    sunday = MONDAY + timedelta(days=6)
    assert opening_day(sunday, [], [], zone=BERLIN, now=berlin(sunday, 20)) == sunday
    no_hours = Workplace(1, "Mitte", BERLIN, ())
    assert opening_day(sunday, [no_hours], [], zone=BERLIN, now=berlin(sunday, 20)) == sunday
