"""The login throttling rules without a database: what one client address is, how a username's count drains."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from doctordesk.domain.accounts.login_throttle import KNOWN_ADDRESS, address_key, drained, is_known, seconds_until

T0 = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:0:1:aaaa:bbbb:cccc:dddd", "2001:db8:0:1::/64"),
        ("2001:DB8:0:1::1", "2001:db8:0:1::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),  # an IPv4 client on a dual-stack socket
        ("fe80::1%eth0", "fe80::/64"),
        ("::1", "::/64"),
        (None, "unknown"),
        ("", "unknown"),
        ("proxy-said-" + "x" * 100, ("proxy-said-" + "x" * 100)[:64]),
    ],
)
def test_a_client_address_is_counted_by_ipv4_address_or_ipv6_64_network(host, key):
    assert address_key(host) == key


def test_a_username_count_forgives_one_failure_per_whole_interval():
    assert drained(5, T0, T0, MINUTE) == (5, T0)
    assert drained(5, T0, T0 + 90 * timedelta(seconds=1), MINUTE) == (4, T0 + MINUTE)  # the half minute carries over
    assert drained(5, T0, T0 + 5 * MINUTE, MINUTE) == (0, T0 + 5 * MINUTE)
    assert drained(5, T0, T0 + 50 * MINUTE, MINUTE) == (0, T0 + 50 * MINUTE)
    assert drained(0, T0, T0 + MINUTE, MINUTE) == (0, T0 + MINUTE)


def test_a_clock_that_went_back_forgives_nothing():
    assert drained(5, T0, T0 - MINUTE, MINUTE) == (5, T0)


def test_an_address_is_known_for_a_while_after_a_successful_login():
    assert is_known(T0, T0 + KNOWN_ADDRESS - timedelta(seconds=1))
    assert not is_known(T0, T0 + KNOWN_ADDRESS)
    assert not is_known(None, T0)


def test_retry_after_is_whole_seconds_rounded_up_and_at_least_one():
    assert seconds_until(T0 + timedelta(seconds=59.2), T0) == 60
    assert seconds_until(T0 + timedelta(seconds=60), T0) == 60
    assert seconds_until(T0, T0) == 1
