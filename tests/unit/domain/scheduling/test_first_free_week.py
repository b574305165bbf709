"""Which week the booking screen opens on when none is asked (``domain/scheduling/booking.py``): the first week with
a free time, looked for in spans of whole weeks up to the horizon's, its Monday in the location's days."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from doctordesk.domain.scheduling.booking import (
    SEARCH_WEEKS,
    Choice,
    first_free,
    in_week,
    search_spans,
    settle,
    week_of,
)

BERLIN = "Europe/Berlin"
THIS_MONDAY = date(2026, 11, 23)
SATURDAY = date(2026, 11, 28)


def test_the_search_covers_every_week_from_this_one_to_the_last_in_spans_of_whole_weeks():
    last = THIS_MONDAY + timedelta(weeks=9)
    spans = search_spans(SATURDAY, last)
    assert spans[0][0] == THIS_MONDAY  # this week, from its Monday (Saturday's week)
    assert spans[-1][1] == last + timedelta(days=6)  # the last week, to its Sunday
    assert all(first.weekday() == 0 and end.weekday() == 6 for first, end in spans)
    assert all(b[0] == a[1] + timedelta(days=1) for a, b in zip(spans, spans[1:], strict=False))  # no gap, no overlap
    assert [(end - first).days + 1 for first, end in spans] == [7 * SEARCH_WEEKS, 7 * SEARCH_WEEKS, 14]


def test_a_span_never_reaches_past_the_horizons_week_and_one_week_is_one_span():
    assert search_spans(THIS_MONDAY, THIS_MONDAY) == [(THIS_MONDAY, THIS_MONDAY + timedelta(days=6))]
    assert search_spans(THIS_MONDAY, THIS_MONDAY - timedelta(weeks=1)) == []


def test_the_first_free_time_names_its_week_in_the_locations_days():
    # Sunday 29 Nov 23:30 UTC is Monday 30 Nov 00:30 in Berlin: next week there.
    late = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    monday_morning = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
    assert first_free([monday_morning, late]) == late
    assert first_free([]) is None
    assert week_of(late, BERLIN) == date(2026, 11, 30)
    assert week_of(late, "UTC") == THIS_MONDAY
    assert in_week([late, monday_morning, monday_morning + timedelta(weeks=1)], date(2026, 11, 30), BERLIN) == [
        late,
        monday_morning,
    ]


def test_settling_keeps_whether_a_week_was_asked():
    places = {1: [10]}
    unasked = settle(Choice(1, 10, "consultation", SATURDAY, week_asked=False), places=places, today=SATURDAY,
                     horizon=timedelta(days=365))  # fmt: skip
    assert unasked.week == THIS_MONDAY and unasked.week_asked is False
    asked = settle(Choice(1, 10, "consultation", THIS_MONDAY), places=places, today=SATURDAY, horizon=timedelta(days=9))
    assert asked.week_asked is True
