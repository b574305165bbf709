"""The access log's line keeps a request's address but not the secrets some addresses carry
(docs/operations.md#access-log)."""

from __future__ import annotations

import logging

import pytest
from uvicorn.config import LOGGING_CONFIG

from doctordesk.web.access_log import ACCESS_LOGGER, SecretsOut, log_config, redacted


@pytest.mark.parametrize(
    ("target", "logged"),
    [
        ("/reminder/Zx81-token_value", "/reminder/***"),
        ("/reminder/Zx81?lang=de", "/reminder/***?lang=de"),
        ("/calendar/k3y-Of_feed.ics", "/calendar/***.ics"),
        ("/calendar/k3y.ics?x=1", "/calendar/***.ics?x=1"),
        ("/profile/stream?ticket=t1ck3t", "/profile/stream?ticket=***"),
        ("/profile/stream?client=a&ticket=t1ck3t&b=2", "/profile/stream?client=a&ticket=***&b=2"),
        ("/auth/sso/clinic/callback?code=c0de&state=st4te", "/auth/sso/clinic/callback?code=***&state=***"),
        ("/x?ACCESS_TOKEN=abc", "/x?ACCESS_TOKEN=***"),
    ],
)
def test_secrets_in_an_address_are_not_logged(target: str, logged: str) -> None:
    assert redacted(target) == logged


@pytest.mark.parametrize(
    "target",
    [
        "/profile/appointments?status=requested&page=2",
        "/healthz",
        "/calendar",
        "/profile/calendar-feed/make",
        "/x?encoded=1&statement=2&codes=3",  # names that only begin like a secret's
        "/profile/reminder/settings",
    ],
)
def test_an_address_without_secrets_is_logged_as_it_is(target: str) -> None:
    assert redacted(target) == target


def test_the_filter_rewrites_uvicorns_access_record_and_nothing_else() -> None:
    record = logging.LogRecord(
        ACCESS_LOGGER, logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/reminder/secret", "1.1", 200), None,
    )  # fmt: skip
    assert SecretsOut().filter(record)
    assert record.getMessage() == '127.0.0.1:5000 - "GET /reminder/*** HTTP/1.1" 200'
    other = logging.LogRecord(ACCESS_LOGGER, logging.INFO, __file__, 1, "%s", ("/reminder/secret",), None)
    assert SecretsOut().filter(other)
    assert other.args == ("/reminder/secret",)


def test_the_configuration_puts_the_filter_on_the_access_logger_only() -> None:
    config = log_config(LOGGING_CONFIG)
    assert config["loggers"][ACCESS_LOGGER]["filters"] == ["secrets_out"]
    assert "filters" not in config["loggers"]["uvicorn"]
    assert "filters" not in LOGGING_CONFIG["loggers"][ACCESS_LOGGER]  # uvicorn's own left as it was
