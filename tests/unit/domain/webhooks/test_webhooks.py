"""Webhook rules: the event type table, endpoint URLs, and the body a receiver gets."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.webhooks import rules as webhooks
from tests.support.addresses import LOOPBACK, OTHER_PRIVATE


def test_every_decision_trigger_of_today_has_a_webhook_event_type() -> None:
    assert {t.value for t in Trigger} <= {k.removeprefix("appointment.") for k in webhooks.EVENT_TYPES}


def test_approval_and_auto_approval_are_both_appointment_approved() -> None:
    assert webhooks.event_type_for("appointment.approve") == "appointment.approved"
    assert webhooks.event_type_for("appointment.auto-approve") == "appointment.approved"


def test_the_triggers_still_to_come_are_mapped_already() -> None:
    assert [webhooks.event_type_for(f"appointment.{t}") for t in ("request", "cancel", "complete")] == [
        "appointment.requested",
        "appointment.canceled",
        "appointment.completed",
    ]
    assert webhooks.event_type_for("appointment.no-show") == "appointment.no-show"
    assert webhooks.event_type_for("appointment.reschedule-request") == "appointment.reschedule-requested"


def test_events_webhooks_do_not_carry_have_no_type() -> None:
    assert webhooks.event_type_for("presence") is None and webhooks.event_type_for("token-revoked") is None


def test_subscribed_types_are_deduplicated_in_table_order_and_unknown_ones_refused() -> None:
    assert webhooks.clean_event_types(["chat.message-created", "appointment.requested", "chat.message-created"]) == [
        "appointment.requested",
        "chat.message-created",
    ]
    with pytest.raises(ValidationFailed) as error:
        webhooks.clean_event_types(["appointment.approved", "appointment.eaten"])
    assert "appointment.eaten" in error.value.fields["event_types"]


@pytest.mark.parametrize(
    "url", ["https://example.com/hook", "http://example.com:8080/a?b=c", "https://hooks.example.org", "http://8.8.8.8/"]
)
def test_public_http_and_https_urls_are_accepted(url: str) -> None:
    assert webhooks.check_url(f"  {url} ", allow_private=False) == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "javascript:alert(1)",
        "https:///path",
        "https://example.com/a#frag",
        "https://exa mple.com/",
        "https://example.com:0x50/",
        "http://" + "a" * 2050 + ".com/",
    ],
)
def test_malformed_or_non_http_urls_are_refused(url: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        webhooks.check_url(url, allow_private=True)
    assert "url" in error.value.fields


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost:8000/",
        "http://api.localhost/",
        "http://192.168.1.5/",
        "http://[fd00::1]/",
    ],
)
def test_private_addresses_need_the_setting(url: str) -> None:
    with pytest.raises(ValidationFailed):
        webhooks.check_url(url, allow_private=False)
    assert webhooks.check_url(url, allow_private=True) == url


SPELLINGS_OF_PRIVATE_ADDRESSES = [
    *LOOPBACK,
    *OTHER_PRIVATE,
    "[::ffff:a9fe:a9fe]",
    "[::127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[fe80::1]",
    "100.64.0.1",
    "224.0.0.1",
]


@pytest.mark.parametrize("host", SPELLINGS_OF_PRIVATE_ADDRESSES)
def test_every_spelling_of_a_private_address_is_refused_as_private(host: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        webhooks.check_url(f"http://{host}:8470/hook", allow_private=False)
    assert error.value.fields == {"url": "Loopback and private addresses are not allowed."}


@pytest.mark.parametrize("host", ["0x7f000001", "127.1", "2130706433", "127.0.0.1.", "010.0.0.1", "134744072"])
def test_an_ipv4_address_is_written_in_dotted_decimal_even_where_private_ones_are_allowed(host: str) -> None:
    for allow_private in (True, False):
        with pytest.raises(ValidationFailed) as error:
            webhooks.check_url(f"http://{host}/", allow_private=allow_private)
        assert "url" in error.value.fields
    with pytest.raises(ValidationFailed) as error:
        webhooks.check_url(f"http://{host}/", allow_private=True)
    assert error.value.fields["url"].startswith("Write an IPv4 address as four decimal numbers")


@pytest.mark.parametrize(
    "url",
    [
        "http://a_b.example.com/",
        "http://-a.example.com/",
        "http://example..com/",
        "http://999.1.1.1/",
        "http://user:pw@example.com/",
        "http://example.com\\@127.0.0.1/",
        "http://example.com:/",
        "http://[fe80::1%25eth0]/",
        "http://☃\u200d.example/",
    ],
)
def test_hosts_that_are_neither_names_nor_addresses_are_refused(url: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        webhooks.check_url(url, allow_private=True)
    assert "url" in error.value.fields


def test_a_name_without_a_domain_is_refused_unless_private_addresses_are_allowed() -> None:
    with pytest.raises(ValidationFailed) as error:
        webhooks.check_url("http://intranet/hook", allow_private=False)
    assert "full host name" in error.value.fields["url"]
    assert webhooks.check_url("http://intranet/hook", allow_private=True) == "http://intranet/hook"


def test_a_unicode_host_name_is_kept_in_its_idna_form_the_name_that_is_dialled() -> None:
    url = webhooks.check_url("https://Bücher.example:8443/in?x=1", allow_private=False)
    assert url == "https://xn--bcher-kva.example:8443/in?x=1"


@pytest.mark.parametrize(
    "url", ["https://hooks.example.org./in", "http://[2606:4700:4700::1111]:8080/", "https://a-1.b.example/"]
)
def test_fully_qualified_names_and_public_ipv6_addresses_are_accepted(url: str) -> None:
    assert webhooks.check_url(url, allow_private=False) == url


@settings(max_examples=300)
@given(st.from_regex(webhooks.URL_PATTERN))
def test_every_url_the_stated_pattern_takes_is_taken_where_private_addresses_are_allowed(url: str) -> None:
    # Within the limits the field's description states beside the pattern: the URL's length and a host name of at
    # most 253 characters (rules.URL_PATTERN says why the pattern does not hold them).
    host = urlsplit(url).hostname or ""
    if len(url.strip()) <= webhooks.MAX_URL_CHARS and url == url.strip() and len(host.rstrip(".")) <= 253:
        assert webhooks.check_url(url, allow_private=True) == url


@pytest.mark.parametrize("host", ["0x7f000001", "127.1", "bücher.example", "user@example.org", "[fe80::1%25x]"])
def test_the_stated_pattern_refuses_what_the_check_refuses_or_rewrites(host: str) -> None:
    assert not re.search(webhooks.URL_PATTERN, f"https://{host}/")


def test_the_payload_is_type_timestamp_and_data_in_compact_json() -> None:
    body = webhooks.payload("appointment.declined", at=datetime(2026, 11, 23, 7, 0, tzinfo=UTC), data={"a": 1})
    assert body == '{"type":"appointment.declined","timestamp":"2026-11-23T07:00:00Z","data":{"a":1}}'


def test_appointment_data_names_statuses_and_carries_no_free_text() -> None:
    event = {"appointment_id": 4, "from_status": 1, "status": 3, "version": 2, "start": "x", "reason": "private"}
    data = webhooks.appointment_data(event, doctor_id=1, patient_id=2, location_id=3)
    assert data["status"] == {"code": 3, "name": "declined"} and data["previous_status"]["name"] == "requested"
    assert "private" not in json.dumps(data)


def test_chat_content_is_included_only_when_given() -> None:
    event = {"appointment_id": 1, "thread_id": 2, "message_id": 3, "sender_id": 4}
    assert "content" not in webhooks.chat_data(event, content=None)
    assert webhooks.chat_data(event, content="hi")["content"] == "hi"
