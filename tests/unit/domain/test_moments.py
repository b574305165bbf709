"""The one reader of dates and times (domain/moments.py): the accepted range is the years 1900-2999 with offsets up
to ±14:00, and whatever it accepts can be moved to UTC and have a visit, a day or a year added without overflow."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctordesk.config import Settings
from doctordesk.domain import moments
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, MAX_HORIZON

OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
ANY_INSTANT = st.builds(
    lambda d, h, m, s, z: datetime(d.year, d.month, d.day, h, m, s, tzinfo=z),
    st.dates(date(1, 1, 1), date(9999, 12, 31)),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    OFFSETS,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ANY_INSTANT)
def test_every_accepted_instant_survives_the_arithmetic_after_it(value):
    read = moments.read_instant(value.isoformat())
    if isinstance(read, str):
        assert read in (moments.RANGE_MESSAGE, moments.INSTANT_MESSAGE)
        return
    utc = read.astimezone(UTC)
    assert moments.EARLIEST <= utc < moments.END
    for step in (timedelta(hours=8), -timedelta(hours=8), timedelta(days=1), MAX_HORIZON, timedelta(days=366)):
        (utc + step).astimezone(timezone(timedelta(hours=-14)))


@pytest.mark.parametrize(
    "raw",
    [
        "9999-12-31T23:30:00-12:00",
        "0001-01-01T00:30:00+14:00",
        "9999-12-31T10:30:00-14:00",
        "2999-12-31T23:30:00-12:00",
        "1900-01-01T00:30:00+14:00",
        "2027-01-01T10:00:00+14:01",
        "3000-01-01T00:00:00Z",
        "1899-12-31T23:59:59Z",
    ],
)
def test_instants_outside_the_range_are_refused_as_out_of_range(raw):
    assert moments.read_instant(raw) == moments.RANGE_MESSAGE


@pytest.mark.parametrize(
    "raw", ["2027-06-30T23:59:60Z", "2027-02-29T10:00:00Z", "2027-01-01T10:00:00", "2027-01-01 10:00:00Z", "0"]
)
def test_malformed_instants_are_refused_as_malformed(raw):
    assert moments.read_instant(raw) == moments.INSTANT_MESSAGE


def test_the_ends_of_the_range_are_accepted():
    assert moments.parse_instant("1900-01-01T00:00:00Z") == moments.EARLIEST
    assert moments.parse_instant("2999-12-31T23:59:59.999999Z") == moments.END - timedelta(microseconds=1)
    assert moments.parse_instant("2999-12-31T23:30+14:00", seconds=False) is not None
    assert moments.parse_day("1900-01-01") == moments.FIRST_DAY and moments.parse_day("2999-12-31") == moments.LAST_DAY
    assert moments.read_day("3000-01-01") == moments.RANGE_MESSAGE and moments.read_day("0000-01-01") == (
        moments.RANGE_MESSAGE
    )
    assert moments.read_day("2027-02-29") == moments.DAY_MESSAGE


def test_a_form_day_records_why_it_is_refused():
    fields: dict[str, str] = {}
    assert moments.form_day("9999-12-31", "to", fields) is None and fields == {"to": moments.RANGE_MESSAGE}
    assert moments.form_day("", "from", fields) is None and "from" not in fields
    assert moments.form_day("2027-13-01", "from", fields, message="x") is None and fields["from"] == "x"


def test_the_booking_horizon_setting_defaults_to_a_year_and_is_bounded():
    assert Settings().booking_horizon_days == DEFAULT_HORIZON.days == 365
    for wrong in (0, MAX_HORIZON.days + 1):
        with pytest.raises(ValueError, match="booking_horizon_days"):
            Settings(booking_horizon_days=wrong)


@given(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
def test_the_stated_day_pattern_matches_exactly_the_days_accepted(day: date) -> None:
    written = day.isoformat()
    assert (re.search(moments.DAY_PATTERN, written) is not None) == isinstance(moments.read_day(written), date)


@given(ANY_INSTANT)
def test_the_stated_instant_pattern_holds_what_the_reader_accepts(moment: datetime) -> None:
    written = moment.isoformat()
    if isinstance(moments.read_instant(written), datetime):
        assert re.search(moments.INSTANT_PATTERN, written), written


# --- one form for every door: RFC 3339 as FHIR writes it ----------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "2027-06-01 10:00:00Z",  # a space for T
        "2027-06-01t10:00:00z",  # lowercase: RFC 3339 lets a reader take it, no door here does
        "2027-06-01T10:00:00z",
        "2027-06-01T10:00:00+01:99",  # offset minutes of 60 or more
        "2027-06-01T10:00:00+13:60",
        "2027-06-01T10:00:00+1400",  # an offset without its colon
        "2027-06-01T10:00:00+14",
        "1790000000",  # seconds since 1970
        "2027-06-01T24:00:00Z",
        "2027-06-01T10:60:00Z",
        "2027-06-01T10:00:00.12345678901234567890Z",
        "2027-06-01",
        "2027-06-01T10:00Z",  # minutes only: FHIR's precision alone (seconds=False)
    ],
)
def test_an_instant_is_written_one_way_only(raw):
    assert moments.read_instant(raw) == moments.INSTANT_MESSAGE


def test_minutes_alone_are_fhirs_precision_and_keep_the_same_characters():
    assert moments.parse_instant("2027-06-01T10:00Z", seconds=False) == datetime(2027, 6, 1, 10, tzinfo=UTC)
    for raw in ("2027-06-01t10:00z", "2027-06-01 10:00Z", "2027-06-01T10:00+01:99", "2027-06-01T24:00Z"):
        assert moments.read_instant(raw, seconds=False) == moments.INSTANT_MESSAGE


@pytest.mark.parametrize("raw", ["24:00", "10:00:00", "23:59:60", "10:00Z", "1000", "9:00", "10:60", "١٠:٠٠", ""])
def test_a_wall_time_is_hh_mm_from_00_00_to_23_59(raw):
    assert moments.read_time(raw) == moments.TIME_MESSAGE


def test_a_wall_time_reads_as_itself():
    assert moments.read_time("00:00") == time(0, 0) and moments.read_time("23:59") == time(23, 59)


def test_a_wall_time_the_clocks_jump_over_is_refused_naming_the_jump():
    read = moments.read_wall(date(2027, 3, 28), time(2, 15), "Europe/Berlin")
    expected = "02:15 does not exist on 2027-03-28 in Europe/Berlin: the clocks go from 02:00 straight to 03:00"
    assert read == expected + " (clock change)."
    half_hour = moments.read_wall(date(2027, 10, 3), time(2, 15), "Australia/Lord_Howe")
    assert isinstance(half_hour, str) and "from 02:00 straight to 02:30" in half_hour


def test_a_wall_time_the_clocks_pass_twice_is_its_first_occurrence_with_its_offset():
    read = moments.read_wall(date(2027, 10, 31), time(2, 15), "Europe/Berlin")
    assert isinstance(read, datetime) and read.isoformat() == "2027-10-31T02:15:00+02:00"
    assert moments.is_ambiguous(date(2027, 10, 31), time(2, 15), "Europe/Berlin")
    assert not moments.is_ambiguous(date(2027, 10, 31), time(3, 15), "Europe/Berlin")


@pytest.mark.parametrize(
    "raw", ["20261130T2400Z", "20261130T0860Z", "20261130t0800z", "20261130T0800", "2026-11-30T08:00Z",
            "202611 1T0800Z", "30001130T0800Z", "20270229T0800Z"],
)  # fmt: skip
def test_the_booking_screens_stamp_is_a_utc_minute_written_one_way(raw):
    assert moments.parse_stamp(raw) is None


def test_the_booking_screens_stamp_reads_as_its_minute():
    assert moments.parse_stamp("20261130T0800Z") == datetime(2026, 11, 30, 8, tzinfo=UTC)


def test_the_stated_patterns_are_the_readers():
    for good in ("2027-06-01T10:00:00Z", "2027-06-01T10:00:00.5+14:00", "2027-06-01T23:59:59-13:59"):
        assert re.fullmatch(moments.INSTANT_PATTERN, good) and moments.parse_instant(good) is not None
    for bad in ("2027-06-01t10:00:00z", "2027-06-01T10:00:00+01:99", "2027-06-01T24:00:00Z", "2027-06-01T23:59:60Z"):
        assert not re.fullmatch(moments.INSTANT_PATTERN, bad) and moments.parse_instant(bad) is None
    assert re.fullmatch(moments.WHOLE_MINUTE_PATTERN, "2027-06-01T10:00:00Z")
    assert not re.fullmatch(moments.WHOLE_MINUTE_PATTERN, "2027-06-01T10:00:01Z")
    assert re.fullmatch(moments.TIME_PATTERN, "23:59") and not re.fullmatch(moments.TIME_PATTERN, "24:00")
    assert re.fullmatch(moments.STAMP_PATTERN, "20261130T0800Z") and not re.fullmatch(
        moments.STAMP_PATTERN, "1790000000"
    )
