"""Webhook settings are checked when the service starts: ranges, and a lease long enough for a claimed batch."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from doctordesk.config import Settings


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("webhook_concurrency", 0),
        ("webhook_endpoint_concurrency", 0),
        ("webhook_endpoint_concurrency", 1000),
        ("webhook_max_attempts", 0),
        ("webhook_disable_after_seconds", 30),
        ("webhook_timeout_seconds", 0.1),
        ("webhook_batch_size", 100_000),
    ],
)
def test_webhook_settings_out_of_range_are_refused_at_start(name: str, value: float) -> None:
    with pytest.raises(ValidationError) as error:
        Settings(**{name: value})
    assert name in str(error.value)


def test_a_lease_shorter_than_three_timeouts_is_refused() -> None:
    with pytest.raises(ValidationError, match="WEBHOOK_LEASE_SECONDS"):
        Settings(webhook_lease_seconds=20, webhook_timeout_seconds=10)
    assert Settings(webhook_lease_seconds=30, webhook_timeout_seconds=10).webhook_lease_seconds == 30


def test_the_defaults_disable_after_five_days_and_refuse_private_addresses() -> None:
    s = Settings()
    assert s.webhook_disable_after_seconds == 5 * 86400 and not s.webhook_allow_private_addresses
