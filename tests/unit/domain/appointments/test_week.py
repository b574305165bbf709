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
    place,
    subtract,
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
