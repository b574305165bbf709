"""A formatted moment is cached by its local minute (second), and reads exactly as the moment itself formatted:
across time zones, daylight saving changes, historic offsets with seconds, both languages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from doctordesk.i18n import formats

ZONES = ["Europe/Berlin", "Europe/London", "America/New_York", "Europe/Amsterdam", "Asia/Kolkata", "UTC"]
moments = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
) | st.builds(  # around the 2026 changes of daylight saving time in Europe, to the microsecond
    lambda base, us: base + timedelta(microseconds=us),
    st.sampled_from([datetime(2026, 3, 29, 1, tzinfo=UTC), datetime(2026, 10, 25, 1, tzinfo=UTC)]),
    st.integers(-7_200_000_000, 7_200_000_000),
)


@settings(max_examples=300, deadline=None)
@given(moments, st.sampled_from(ZONES), st.sampled_from(["en", "de"]), st.booleans())
def test_a_cached_moment_reads_as_the_moment_itself(moment, zone, language, seconds):
    exact = formats._format_local.__wrapped__(moment, zone, language, seconds)
    assert formats.format_local(moment, zone, language, seconds=seconds) == exact


def test_moments_of_one_minute_share_one_entry():
    at = datetime(2026, 11, 24, 9, 30, 1, 5, tzinfo=UTC)
    formats.format_local(at, "Europe/Berlin", "en")
    hits = formats._format_local.cache_info().hits
    assert formats.format_local(at + timedelta(seconds=58), "Europe/Berlin", "en") == "Tue 24 Nov 2026, 10:30 CET"
    assert formats._format_local.cache_info().hits == hits + 1


def test_the_hour_the_clocks_go_back_reads_twice_with_its_two_zone_names():
    # 02:30 in Berlin happens twice on 25 October 2026: first in summer time, then in winter time.
    summer, winter = datetime(2026, 10, 25, 0, 30, tzinfo=UTC), datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    assert formats.format_local(summer, "Europe/Berlin", "en") == "Sun 25 Oct 2026, 02:30 CEST"
    assert formats.format_local(winter, "Europe/Berlin", "en") == "Sun 25 Oct 2026, 02:30 CET"
