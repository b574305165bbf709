"""The one reader of dates and times (domain/moments.py): the accepted range is the years 1900-2999 with offsets up
to ±14:00, and whatever it accepts can be moved to UTC and have a visit, a day or a year added without overflow."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

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
