"""FHIR Subscription rules: criteria on Appointment (status and participants only), the rest-hook channel, headers,
matching an appointment's state, and the status a subscription reads as."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import subscriptions as rules
from doctordesk.domain.fhir.errors import NotSupported

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
BOOKED_BY_3 = {"status": "booked", "practitioner": 3, "patient": 7, "location": 1}


def body(**overrides: Any) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "resourceType": "Subscription",
        "status": "requested",
        "reason": "Bookings for the EHR",
        "criteria": "Appointment?status=booked&practitioner=Practitioner/3",
        "channel": {
            "type": "rest-hook",
            "endpoint": "https://ehr.example.org/fhir",
            "payload": "application/fhir+json",
        },
    }
    resource.update(overrides)
    return resource


def test_criteria_parse_status_and_participants_with_or_inside_and_and_across_repeats():
    text, match = rules.parse_criteria(
        " Appointment?status=booked,pending&practitioner=3&patient=Patient%2F7&location=Location/1&location=1 "
    )
    assert text.startswith("Appointment?status=booked,pending")
    assert match == {
        "status": [["booked", "pending"]],
        "practitioner": [[3]],
        "patient": [[7]],
        "location": [[1], [1]],
    }
    assert rules.matches(match, BOOKED_BY_3)
    assert not rules.matches(match, {**BOOKED_BY_3, "status": "cancelled"})
    assert not rules.matches(match, {**BOOKED_BY_3, "location": 2})


def test_bare_appointment_criteria_match_every_change():
    assert rules.parse_criteria("Appointment") == ("Appointment", {})
    assert rules.matches({}, BOOKED_BY_3)


def test_repeated_parameters_are_anded():
    _, match = rules.parse_criteria("Appointment?practitioner=3&practitioner=4")
    assert not rules.matches(match, BOOKED_BY_3) and not rules.matches(match, {**BOOKED_BY_3, "practitioner": 4})


@pytest.mark.parametrize(
    "criteria",
    [
        "Patient?name=x",
        "Observation",
        "Appointment?date=ge2026-11-01",
        "Appointment?identifier=his-1",
        "Appointment?status:not=booked",
        "Appointment?_include=Appointment:patient",
    ],
)
def test_other_resources_and_parameters_are_not_supported(criteria):
    with pytest.raises(NotSupported) as refused:
        rules.parse_criteria(criteria)
    assert set(refused.value.fields) == {"criteria"}


@pytest.mark.parametrize(
    "criteria",
    [
        "",
        "   ",
        None,
        42,
        "appointment?status=booked",
        "/Appointment?status=booked",
        "Appointment?status",
        "Appointment?status=",
        "Appointment?=booked",
        "Appointment?status=booked&&practitioner=3",
        "Appointment?status=confirmed",
        "Appointment?practitioner=Patient/3",
        "Appointment?practitioner=abc",
        "Appointment?status=,",
        "Appointment?status=booked" + "&practitioner=3" * 100,
    ],
)
def test_malformed_criteria_are_invalid(criteria):
    with pytest.raises(ValidationFailed) as refused:
        rules.parse_criteria(criteria)
    assert set(refused.value.fields) == {"criteria"}


def test_a_resource_is_parsed_into_what_the_subscription_asks_for():
    wanted = rules.parse(body(end="2027-01-01T00:00:00+01:00"), allow_private=False)
    assert (wanted.status, wanted.payload, wanted.endpoint) == ("active", rules.PAYLOAD, "https://ehr.example.org/fhir")
    assert wanted.end == datetime(2026, 12, 31, 23, 0, tzinfo=UTC)
    assert rules.parse(body(status="off"), allow_private=False).status == "off"
    no_payload = body(channel={"type": "rest-hook", "endpoint": "https://ehr.example.org/hook"})
    assert rules.parse(no_payload, allow_private=False).payload is None


@pytest.mark.parametrize("kind", ["websocket", "email", "sms", "message"])
def test_only_rest_hook_channels_are_served(kind):
    with pytest.raises(NotSupported) as refused:
        rules.parse(body(channel={"type": kind, "endpoint": "https://ehr.example.org/fhir"}), allow_private=False)
    assert set(refused.value.fields) == {"channel.type"}


def test_a_payload_other_than_fhir_json_is_not_supported():
    channel = {"type": "rest-hook", "endpoint": "https://ehr.example.org/fhir", "payload": "application/fhir+xml"}
    with pytest.raises(NotSupported) as refused:
        rules.parse(body(channel=channel), allow_private=False)
    assert set(refused.value.fields) == {"channel.payload"}


@pytest.mark.parametrize(
    ("endpoint", "allow_private", "ok"),
    [
        ("https://ehr.example.org/fhir", False, True),
        ("http://ehr.example.org/fhir", False, False),  # patients' data: https only
        ("https://127.0.0.1:8443/fhir", False, False),  # the webhooks' rule on private addresses
        ("https://169.254.169.254/latest", False, False),
        ("http://127.0.0.1:9000/fhir", True, True),  # tests and development
        ("ftp://ehr.example.org/", True, False),
        ("https://ehr.example.org/fhir#x", False, False),
    ],
)
def test_endpoints_follow_the_webhook_url_rule_and_need_https(endpoint, allow_private, ok):
    resource = body(channel={"type": "rest-hook", "endpoint": endpoint})
    if ok:
        assert rules.parse(resource, allow_private=allow_private).endpoint == endpoint
        return
    with pytest.raises(ValidationFailed) as refused:
        rules.parse(resource, allow_private=allow_private)
    assert set(refused.value.fields) == {"channel.endpoint"}


def test_headers_are_normalised_and_those_the_service_sets_are_refused():
    assert rules.check_headers(["Authorization:Bearer abc ", "X-Tenant: 7"]) == [
        "Authorization: Bearer abc",
        "X-Tenant: 7",
    ]
    assert rules.header_pairs(["Authorization: Bearer a:b"]) == [("Authorization", "Bearer a:b")]
    for bad in (
        ["Content-Type: text/plain"],
        ["webhook-id: x"],
        ["NoColon"],
        ["Bad Name: x"],
        ["X-Empty:"],
        ["X-Line: a\r\nInjected: b"],
        ["X-Unicode: café"],
        "X-Not-A-List: 1",
        [f"X-{n}: 1" for n in range(rules.MAX_HEADERS + 1)],
    ):
        with pytest.raises(ValidationFailed):
            rules.check_headers(bad)


@pytest.mark.parametrize(
    "overrides",
    [
        {"status": "error"},
        {"status": None},
        {"reason": ""},
        {"reason": "x" * 501},
        {"reason": "two\nlines"},
        {"contact": [{"system": "email", "value": "a@example.org"}]},
        {"channel": "rest-hook"},
        {"channel": {"type": "rest-hook", "endpoint": "https://e.example.org", "extra": 1}},
        {"channel": {"endpoint": "https://e.example.org"}},
        {"end": "2027-01-01"},
        {"end": "2027-01-01T00:00:00"},
        {"extension": [{"url": "urn:other", "valueString": "x"}]},
    ],
)
def test_malformed_resources_are_refused_naming_the_element(overrides):
    with pytest.raises(ValidationFailed) as refused:
        rules.parse(body(**overrides), allow_private=False)
    assert refused.value.fields


def test_the_secret_extension_sent_back_is_ignored():
    resource = body(extension=[{"url": rules.SECRET_EXTENSION, "valueString": "whsec_x"}])
    assert rules.parse(resource, allow_private=False).status == "active"


def test_status_reads_off_error_or_active():
    later = NOW + timedelta(days=1)
    assert rules.status_of(asked="active", enabled=True, end=None, now=NOW, disabled_reason=None) == ("active", None)
    assert rules.status_of(asked="off", enabled=False, end=None, now=NOW, disabled_reason="x") == ("off", None)
    assert rules.status_of(asked="active", enabled=True, end=NOW, now=NOW, disabled_reason=None) == ("off", None)
    assert rules.status_of(asked="active", enabled=False, end=later, now=NOW, disabled_reason="410 Gone") == (
        "error",
        "410 Gone",
    )
