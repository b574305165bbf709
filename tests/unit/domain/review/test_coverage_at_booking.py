"""The booking screen's coverage warning comes from the same verdict Review and Approve applies
(``coverage.check`` = ``terms`` + ``evaluate``), in the patient's words."""

from __future__ import annotations

import json
from datetime import date

from doctordesk.domain.errors import DateNotCovered, ForbiddenByPolicy, ThirdPartyDataInvalid
from doctordesk.domain.review.coverage import Policy, blocks_approval, booking_warning, check, covered_ahead

DATA = json.dumps({"member_id": "M1", "plan": "basic", "status": "active"})
YEAR = Policy(date(2026, 1, 1), date(2026, 12, 31), {"doctors": [1]}, {"services": ["checkup"]}, DATA)
SLOT = {"day": date(2026, 11, 30), "doctor_id": 1, "location_id": 1, "service": "consultation"}


def test_each_verdict_reads_as_the_patient_should_read_it():
    assert check([YEAR], **SLOT).ok and booking_warning(check([YEAR], **SLOT)) is None
    late = check([YEAR], **{**SLOT, "day": date(2027, 1, 4)})
    assert isinstance(late.error, DateNotCovered)
    assert str(booking_warning(late)).startswith("Your insurance policy does not cover this date")
    excluded = check([YEAR], **{**SLOT, "service": "checkup"})
    assert isinstance(excluded.error, ForbiddenByPolicy)
    assert "excludes this service or this doctor" in str(booking_warning(excluded))
    nothing = check([], **SLOT)
    assert isinstance(nothing.error, ThirdPartyDataInvalid)
    assert str(booking_warning(nothing)).startswith("Your insurance details could not be confirmed")
    elsewhere = check([YEAR], **{**SLOT, "doctor_id": 2})
    assert elsewhere.ok and str(booking_warning(elsewhere)).startswith("Out of network: your insurance")


def test_only_a_verdict_that_would_block_approval_blocks_a_request():
    assert not blocks_approval(check([YEAR], **SLOT))
    assert not blocks_approval(check([YEAR], **{**SLOT, "doctor_id": 2}))  # out of network: approval possible
    for blocked in ({"day": date(2027, 1, 4)}, {"service": "checkup"}):
        assert blocks_approval(check([YEAR], **{**SLOT, **blocked}))
    assert blocks_approval(check([], **SLOT))


def test_the_days_a_policy_covers_from_today_on():
    later = Policy(date(2027, 1, 1), date(2027, 6, 30), None, None, DATA)
    assert covered_ahead([YEAR], today=date(2026, 11, 23)) == (date(2026, 11, 23), date(2026, 12, 31))
    assert covered_ahead([YEAR, later], today=date(2026, 11, 23)) == (date(2027, 1, 1), date(2027, 6, 30))
    assert covered_ahead([YEAR], today=date(2027, 1, 1)) is None  # expired: no other date helps
