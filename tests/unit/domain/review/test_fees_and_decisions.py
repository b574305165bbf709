from __future__ import annotations

from datetime import UTC, datetime

import pytest

from doctordesk.domain.appointments.decisions import Trigger, can_decide, clean_reason, next_status
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import InvalidTransition, ValidationFailed
from doctordesk.domain.review.fees import FeeRow, compute, money

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
ROWS = [
    FeeRow("doctor_fee", 1, 10, 6000, 0, "EUR"),
    FeeRow("doctor_fee", 1, None, 7000, 0, "EUR"),
    FeeRow("doctor_fee", None, None, 5000, 0, "EUR"),
    FeeRow("location_fee", None, 10, 1500, 0, "EUR"),
    FeeRow("weekend", None, None, 0, 25, "EUR"),
    FeeRow("short_notice", None, None, 0, 10, "EUR"),
]


def fees(doctor=1, location=10, start=datetime(2026, 11, 25, 9, 0, tzinfo=UTC)):
    return compute(ROWS, doctor_id=doctor, location_id=location, start=start, timezone="Europe/Berlin", now=NOW)


def test_the_most_specific_doctor_fee_wins():
    assert fees().doctor_fee_cents == 6000
    assert fees(location=20).doctor_fee_cents == 7000
    assert fees(doctor=2, location=20).doctor_fee_cents == 5000


def test_total_fee_adds_the_location_fee():
    f = fees()
    assert (f.doctor_fee, f.total_fee) == ("€60.00", "€75.00")


def test_weekend_surcharge_applies_on_a_local_saturday():
    f = fees(start=datetime(2026, 11, 28, 9, 0, tzinfo=UTC))
    assert f.surcharges == ("weekend",) and f.doctor_fee_cents == 7500


def test_short_notice_surcharge_applies_within_24_hours():
    f = fees(start=datetime(2026, 11, 23, 12, 0, tzinfo=UTC))
    assert f.surcharges == ("short_notice",) and f.doctor_fee_cents == 6600


def test_no_doctor_fee_row_means_no_fee_shown():
    assert compute([], doctor_id=1, location_id=1, start=NOW, timezone="UTC", now=NOW) is None


def test_money_formats_cents():
    assert money(123456, "GBP") == "£1,234.56"


def test_approve_as_proposed_gives_approved():
    assert next_status(Status.REQUESTED, Trigger.APPROVE) is Status.APPROVED


def test_alternatives_all_in_network_give_status_5():
    assert next_status(Status.REQUESTED, Trigger.SUGGEST, coverage_warnings=[None, None]) == 5


def test_an_out_of_network_alternative_gives_status_9():
    assert next_status(Status.REQUESTED, Trigger.SUGGEST, coverage_warnings=[None, "out"]) == 9


def test_auto_approval_gives_approved():
    assert next_status(Status.REQUESTED, Trigger.AUTO_APPROVE) is Status.APPROVED


def test_decline_gives_declined():
    assert next_status(Status.REQUESTED, Trigger.DECLINE) is Status.DECLINED


@pytest.mark.parametrize("status", [Status.CANCELED, Status.COMPLETED, Status.APPROVED, Status.DECLINED])
@pytest.mark.parametrize("trigger", [Trigger.APPROVE, Trigger.SUGGEST, Trigger.DECLINE])
def test_only_requests_can_be_decided(status, trigger):
    assert not can_decide(status)
    with pytest.raises(InvalidTransition):
        next_status(status, trigger, coverage_warnings=[None])


def test_patient_accepting_an_offer_gives_approved_and_rejecting_all_gives_canceled():
    assert next_status(Status.PENDING_RESPONSE_COVERAGE_RISK, Trigger.ACCEPT_OFFER) is Status.APPROVED
    assert next_status(Status.PENDING_RESPONSE, Trigger.REJECT_OFFERS) is Status.CANCELED
    with pytest.raises(InvalidTransition):
        next_status(Status.REQUESTED, Trigger.ACCEPT_OFFER)


def test_decline_needs_a_reason_naming_the_reason_field():
    with pytest.raises(ValidationFailed) as err:
        clean_reason("   ")
    assert "reason" in err.value.fields
    assert clean_reason("  Not my specialty ") == "Not my specialty"
