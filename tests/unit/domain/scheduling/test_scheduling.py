from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from doctordesk.domain.clock import FixedClock
from doctordesk.domain.scheduling.suggestions import (
    DEFAULT_HORIZON,
    Busy,
    CardInput,
    Directory,
    Hours,
    Original,
    Proposal,
    check_proposals,
    local_to_utc,
    parse_cards,
    windows,
)

CLOCK = FixedClock(datetime(2026, 11, 23, 7, 0, tzinfo=UTC))  # Monday 08:00 in Berlin
DIR = Directory(doctors={1: "Dr. A", 2: "Dr. B"}, locations={10: "Europe/Berlin", 20: "Europe/London"})
HOURS = {
    (1, 10): [Hours(d, time(8), time(17)) for d in range(5)],
    (2, 10): [Hours(d, time(9), time(18)) for d in range(7)],
    (2, 20): [Hours(d, time(8), time(16)) for d in range(7)],
}
ORIGINAL = Original(1, 10, datetime(2026, 11, 25, 8, 0, tzinfo=UTC))


def parse(*cards: CardInput, tz: str = "Europe/Berlin", submitted: bool = True):
    return parse_cards(cards, timezone=tz, duration_minutes=30, directory=DIR, submitted=submitted)


def check(proposals, busy=()):
    return check_proposals(
        proposals,
        now=CLOCK.now(),
        horizon=DEFAULT_HORIZON,
        original=ORIGINAL,
        directory=DIR,
        work_hours=HOURS,
        busy=list(busy),
    )


def card(date="2026-11-24", at="10:00", doctor="1", location="10") -> CardInput:
    return CardInput(doctor, location, date, at)


def test_a_complete_card_becomes_a_proposal_in_utc():
    parsed = parse(card())
    assert parsed.errors == {}
    assert parsed.proposals[0].start == datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


def test_empty_date_and_time_are_errors_naming_the_field_on_submission():
    parsed = parse(card(date="", at=""))
    assert parsed.errors == {"date~1": "Enter a date.", "time~1": "Enter a time."}


def test_empty_fields_while_editing_only_mark_the_card_incomplete():
    parsed = parse(card(), card(date="", at=""), submitted=False)
    assert parsed.errors == {} and parsed.incomplete == {2}


def test_dates_and_times_must_match_the_expected_formats():
    parsed = parse(card(date="24.11.2026", at="10h"), card(date="2026-02-30", at="25:00"))
    assert set(parsed.errors) == {"date~1", "time~1", "date~2", "time~2"}


def test_unknown_doctor_or_location_is_refused():
    parsed = parse(card(doctor="99", location="abc"))
    assert set(parsed.errors) == {"profile~1", "location~1"}


def test_fourth_alternative_is_refused():
    parsed = parse(card(at="10:00"), card(at="11:00"), card(at="12:00"), card(at="13:00"))
    assert "date~4" in parsed.errors and len(parsed.proposals) == 3


def test_lead_time_is_at_least_two_hours_from_now():
    # now is 08:00 Berlin; 09:30 is too soon, 10:00 is fine
    assert check(parse(card(date="2026-11-23", at="09:30")).proposals) == {
        "time~1": "Propose a time at least 2 hours from now."
    }
    assert check(parse(card(date="2026-11-23", at="10:00")).proposals) == {}


def test_proposals_outside_work_hours_are_refused():
    errors = check(parse(card(at="16:45"), card(at="07:30"), card(date="2026-11-28", at="10:00")).proposals)
    assert set(errors) == {"time~1", "time~2", "time~3"}  # ends after 17:00, before opening, a Saturday


def test_work_hours_are_checked_in_the_locations_timezone():
    # Dr. B works 08:00-16:00 in London; 08:30 London is 09:30 Berlin (entered in Berlin time)
    ok = parse(card(doctor="2", location="20", at="09:30"))
    assert check(ok.proposals) == {}
    too_early = parse(card(doctor="2", location="20", at="08:30"))  # 07:30 London
    assert "time~1" in check(too_early.proposals)


def test_work_hours_stay_local_across_the_dst_change():
    # Europe/Berlin leaves summer time on 2027-10-31: 08:00 local is 06:00 UTC before and 07:00 UTC after.
    before = parse(card(doctor="2", date="2027-10-30", at="09:00")).proposals[0]
    after = parse(card(doctor="2", date="2027-10-31", at="09:00")).proposals[0]
    assert before.start.hour == 7 and after.start.hour == 8
    assert check([before]) == {} and check([after]) == {}
    early = parse(card(doctor="2", date="2027-10-31", at="08:30")).proposals
    assert "time~1" in check(early)


def test_a_time_in_the_spring_forward_gap_does_not_exist():
    parsed = parse(card(date="2027-03-28", at="02:30"))
    assert "time~1" in parsed.errors and "clock change" in parsed.errors["time~1"]


def test_an_ambiguous_autumn_time_means_its_first_occurrence():
    moment = local_to_utc(datetime(2027, 10, 31).date(), time(2, 30), "Europe/Berlin")
    assert moment == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)


def test_overlap_with_a_booked_appointment_is_duration_aware():
    busy = [Busy(1, datetime(2026, 11, 24, 8, 45, tzinfo=UTC), datetime(2026, 11, 24, 9, 15, tzinfo=UTC), "x")]
    assert "time~1" in check(parse(card(at="10:00")).proposals, busy)  # 09:00-09:30 UTC meets 08:45-09:15
    assert check(parse(card(at="10:15")).proposals, busy) == {}  # starts exactly when it ends


def test_busy_times_of_another_doctor_do_not_conflict():
    busy = [Busy(2, datetime(2026, 11, 24, 9, 0, tzinfo=UTC), datetime(2026, 11, 24, 9, 30, tzinfo=UTC), "x")]
    assert check(parse(card(at="10:00")).proposals, busy) == {}


def test_alternatives_may_not_overlap_each_other():
    errors = check(parse(card(at="10:00"), card(at="10:15")).proposals)
    assert errors == {"time~2": "Overlaps alternative 1."}


def test_exact_duplicates_are_prevented():
    errors = check(parse(card(at="10:00"), card(at="10:00")).proposals)
    assert "Same doctor, location, date and time" in errors["time~2"]


def test_same_time_with_another_doctor_is_not_a_duplicate():
    assert check(parse(card(at="10:00"), card(doctor="2", at="10:00")).proposals) == {}


def test_an_alternative_equal_to_the_request_skips_lead_time_and_hours():
    original_now = Original(1, 10, datetime(2026, 11, 23, 7, 30, tzinfo=UTC))
    p = parse(card(date="2026-11-23", at="08:30")).proposals
    errors = check_proposals(
        p, now=CLOCK.now(), horizon=DEFAULT_HORIZON, original=original_now, directory=DIR, work_hours={}, busy=[]
    )
    assert errors == {}


def test_overlap_windows_are_bounded_per_proposal():
    p = Proposal(1, 1, 10, datetime(2026, 11, 24, 9, 0, tzinfo=UTC), 30)
    ((doctor, lo, hi),) = windows([p])
    assert doctor == 1 and hi - lo == timedelta(hours=8, minutes=30)
