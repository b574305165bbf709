"""Work hours with dated exceptions (holiday, absence, extra day), in the location's wall-clock time across clock
changes, and the appointments a change of hours leaves outside."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from doctordesk.domain.scheduling.exception_times import ExceptionTimes, exception_times, time_errors
from doctordesk.domain.scheduling.suggestions import (
    Hours,
    HoursException,
    Proposal,
    Schedule,
    exception_errors,
    hours_errors,
    left_outside,
    within_hours,
)

BERLIN = "Europe/Berlin"
WEEKDAYS = [Hours(d, time(9), time(17)) for d in range(5)]
# Berlin moves its clocks forward on Sunday 28 March 2027 (CET +1 → CEST +2).
SPRING_SUNDAY, SPRING_MONDAY = date(2027, 3, 28), date(2027, 3, 29)


def at(y: int, m: int, d: int, hh: int, mm: int = 0, minutes: int = 30, location: int = 1) -> Proposal:
    return Proposal(1, 7, location, datetime(y, m, d, hh, mm, tzinfo=UTC), minutes)


def test_a_holiday_closes_a_day_the_weekly_rules_open():
    monday_10_local = at(2027, 3, 29, 8)  # 10:00 CEST
    assert within_hours(monday_10_local, BERLIN, WEEKDAYS)
    assert not within_hours(monday_10_local, BERLIN, WEEKDAYS, [HoursException(SPRING_MONDAY, "holiday")])


def test_an_extra_day_opens_a_day_without_weekly_hours_in_local_time_after_the_clock_change():
    extra = [HoursException(SPRING_SUNDAY, "extra", None, time(9), time(12))]
    inside = at(2027, 3, 28, 7, 30)  # 09:30 CEST (08:30 if the offset of the day before were used)
    late = at(2027, 3, 28, 9, 45)  # 11:45 CEST: ends 12:15, past closing (10:45 at the old offset)
    assert not within_hours(inside, BERLIN, WEEKDAYS)
    assert within_hours(inside, BERLIN, WEEKDAYS, extra)
    assert not within_hours(late, BERLIN, WEEKDAYS, extra)


def test_a_holiday_is_a_local_date_even_where_utc_is_still_the_day_before():
    # Monday 26 October 2026, the day after Berlin's autumn change: 00:30 local is 23:30 UTC on Sunday.
    hours = [Hours(0, time(0), time(23, 59))]
    early_monday = at(2026, 10, 25, 23, 30, minutes=20)
    assert within_hours(early_monday, BERLIN, hours)
    assert not within_hours(early_monday, BERLIN, hours, [HoursException(date(2026, 10, 26), "holiday")])
    assert within_hours(early_monday, BERLIN, hours, [HoursException(date(2026, 10, 25), "holiday")])


def test_a_partial_absence_blocks_only_its_hours_and_a_whole_day_absence_all():
    absence = [HoursException(SPRING_MONDAY, "absence", None, time(12), time(14))]
    assert not within_hours(at(2027, 3, 29, 10), BERLIN, WEEKDAYS, absence)  # 12:00 CEST
    assert not within_hours(at(2027, 3, 29, 9, 45), BERLIN, WEEKDAYS, absence)  # 11:45-12:15 touches it
    assert within_hours(at(2027, 3, 29, 12), BERLIN, WEEKDAYS, absence)  # 14:00 CEST
    assert not within_hours(at(2027, 3, 29, 12), BERLIN, WEEKDAYS, [HoursException(SPRING_MONDAY, "absence")])


def test_an_exception_at_one_location_leaves_the_others_alone():
    holiday_at_2 = [HoursException(SPRING_MONDAY, "holiday", 2)]
    assert within_hours(at(2027, 3, 29, 8, location=1), BERLIN, WEEKDAYS, holiday_at_2)
    assert not within_hours(at(2027, 3, 29, 8, location=2), BERLIN, WEEKDAYS, holiday_at_2)


def test_a_change_lists_only_the_appointments_it_leaves_outside():
    booked = [at(2027, 3, 29, 8), at(2027, 3, 30, 8), at(2027, 3, 28, 8)]  # Mon, Tue, and Sunday (already outside)
    before = Schedule({(7, 1): WEEKDAYS}, {})
    after = Schedule({(7, 1): WEEKDAYS}, {7: [HoursException(SPRING_MONDAY, "holiday")]})
    assert left_outside(booked, {1: BERLIN}, before=before, after=after) == [booked[0]]
    shorter = Schedule({(7, 1): [Hours(d, time(11), time(17)) for d in range(5)]}, {})
    assert left_outside(booked, {1: BERLIN}, before=before, after=shorter) == booked[:2]


def test_weekly_rules_and_exceptions_that_make_no_sense_are_refused():
    assert "rules.0" in hours_errors([Hours(7, time(9), time(10))])
    assert "rules.0" in hours_errors([Hours(1, time(10), time(9))])
    assert "rules.1" in hours_errors([Hours(1, time(9), time(12)), Hours(1, time(11), time(13))])
    assert hours_errors([Hours(1, time(9), time(12)), Hours(1, time(12), time(13))]) == {}
    assert "kind" in exception_errors(HoursException(SPRING_MONDAY, "vacation"))
    assert exception_errors(HoursException(SPRING_MONDAY, "holiday", None, time(9), time(10)))
    assert exception_errors(HoursException(SPRING_MONDAY, "extra"))
    assert exception_errors(HoursException(SPRING_MONDAY, "absence", None, time(9)))
    assert exception_errors(HoursException(SPRING_MONDAY, "extra", None, time(9, 0, 30), time(10)))
    assert exception_errors(HoursException(SPRING_MONDAY, "absence")) == {}


# Berlin moves its clocks back on Sunday 31 October 2027 (03:00 CEST → 02:00 CET): 02:00-02:59 happens twice.
AUTUMN_SUNDAY = date(2027, 10, 31)


def test_an_extra_hour_on_the_night_the_clocks_go_back_is_its_first_occurrence_only():
    extra = [HoursException(AUTUMN_SUNDAY, "extra", None, time(2, 0), time(2, 45))]
    first = at(2027, 10, 31, 0, 15)  # 02:15 CEST (+02:00)
    second = at(2027, 10, 31, 1, 15)  # 02:15 CET (+01:00): the same wall time an hour later
    assert within_hours(first, BERLIN, [], extra)
    assert not within_hours(second, BERLIN, [], extra)


def test_an_absence_on_the_night_the_clocks_go_back_blocks_its_first_occurrence_only():
    night = [Hours(6, time(0), time(6))]
    absence = [HoursException(AUTUMN_SUNDAY, "absence", None, time(2, 0), time(2, 45))]
    assert not within_hours(at(2027, 10, 31, 0, 15), BERLIN, night, absence)
    assert within_hours(at(2027, 10, 31, 1, 15), BERLIN, night, absence)


def test_an_exceptions_times_are_refused_in_the_spring_gap_and_stated_with_their_offset_in_the_autumn_fold():
    zones = {1: BERLIN, 2: "Asia/Tokyo"}
    gap = HoursException(SPRING_SUNDAY, "extra", None, time(2, 15), time(2, 45))
    errors = time_errors(gap, zones)
    assert set(errors) == {"opens", "closes"} and "the clocks go from 02:00 straight to 03:00" in errors["opens"]
    assert time_errors(HoursException(SPRING_SUNDAY, "extra", 2, time(2, 15), time(2, 45)), zones) == {}
    fold = HoursException(AUTUMN_SUNDAY, "extra", None, time(2, 15), time(2, 45))
    assert time_errors(fold, zones) == {}
    assert exception_times(fold, zones) == [
        ExceptionTimes(1, "2027-10-31T02:15:00+02:00", "2027-10-31T02:45:00+02:00"),
        ExceptionTimes(2, "2027-10-31T02:15:00+09:00", "2027-10-31T02:45:00+09:00"),
    ]
