from __future__ import annotations

import json
from datetime import date

import pytest

from doctordesk.domain.errors import DateNotCovered, ForbiddenByPolicy, ThirdPartyDataInvalid
from doctordesk.domain.review.coverage import Policy, check_third_party, evaluate, terms

VALID = json.dumps({"member_id": "M-1", "plan": "comfort", "status": "active"})


def policy(**kw) -> Policy:
    values = {
        "valid_from": date(2026, 1, 1),
        "valid_to": date(2026, 12, 31),
        "network": {},
        "exclusions": {},
        "third_party_data": VALID,
    }
    values.update(kw)
    return Policy(**values)


def verdict(p: Policy, *, day=date(2026, 11, 24), doctor=1, location=10, service="consultation", prefix="~2"):
    return evaluate(terms([p]), day=day, doctor_id=doctor, location_id=location, service=service, field_prefix=prefix)


def test_a_date_outside_the_policy_period_is_not_covered():
    v = verdict(policy(), day=date(2027, 1, 5))
    assert isinstance(v.error, DateNotCovered) and v.error.fields == {"date~2": v.error.fields["date~2"]}


def test_an_excluded_service_is_forbidden_by_policy_terms():
    v = verdict(policy(exclusions={"services": ["Teledermatology"]}), service="teledermatology")
    assert isinstance(v.error, ForbiddenByPolicy)


def test_an_excluded_doctor_profile_is_forbidden_and_names_the_profile_field():
    v = verdict(policy(exclusions={"doctors": [1]}))
    assert isinstance(v.error, ForbiddenByPolicy) and "profile~2" in v.error.fields


def test_out_of_network_is_a_warning_not_an_error():
    v = verdict(policy(network={"doctors": [2], "locations": [10]}))
    assert v.ok and v.warning is not None and "doctor" in v.warning


def test_empty_network_lists_mean_any():
    assert verdict(policy(network={"doctors": [], "locations": []})).warning is None


@pytest.mark.parametrize(
    "raw",
    [None, "", "{", "[]", json.dumps({"plan": "x", "status": "active"}), json.dumps({"member_id": "M", "plan": "x"})],
)
def test_missing_or_malformed_third_party_data_is_invalid(raw):
    with pytest.raises(ThirdPartyDataInvalid):
        check_third_party(raw)


def test_inactive_membership_is_invalid_third_party_data():
    with pytest.raises(ThirdPartyDataInvalid):
        check_third_party(json.dumps({"member_id": "M", "plan": "x", "status": "suspended"}))


def test_malformed_network_lists_are_invalid_third_party_data():
    with pytest.raises(ThirdPartyDataInvalid):
        terms([policy(network={"doctors": "all"})])


def test_no_policy_at_all_is_missing_third_party_data():
    with pytest.raises(ThirdPartyDataInvalid):
        terms([])
