"""``DOCTORDESK_SMTP_URL`` read as a relay (docs/notifications.md#the-relay): the scheme says how the connection is
protected, credentials are percent-decoded and never sent in clear, and a URL that names no relay is refused at
start with a reason that does not repeat the password."""

from __future__ import annotations

import pytest

from doctordesk.config import SettingsError, load_settings
from doctordesk.domain.mail.relay import Relay, parse_relay


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://relay.example", Relay("relay.example", 25, implicit_tls=False, starttls=False)),
        ("smtp://127.0.0.1:2525", Relay("127.0.0.1", 2525, implicit_tls=False, starttls=False)),
        ("smtp+starttls://mail.example.org", Relay("mail.example.org", 587, implicit_tls=False, starttls=True)),
        ("smtps://mail.example.org", Relay("mail.example.org", 465, implicit_tls=True, starttls=False)),
        (
            "smtps://clinic%40example.org:s3cr%3At@mail.example.org:4650",
            Relay("mail.example.org", 4650, implicit_tls=True, starttls=False,
                  username="clinic@example.org", password="s3cr:t"),
        ),
        # A user name on plain smtp:// means STARTTLS, required: the password never goes in clear.
        (
            "smtp://clinic:pw@mail.example.org:587",
            Relay("mail.example.org", 587, implicit_tls=False, starttls=True, username="clinic", password="pw"),
        ),
        ("SMTPS://Mail.Example.org/", Relay("mail.example.org", 465, implicit_tls=True, starttls=False)),
    ],
)  # fmt: skip
def test_each_scheme_names_how_the_connection_is_protected(url, expected):
    assert parse_relay(url) == expected


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://mail.example.org", "use smtp://"),
        ("mail.example.org:25", "use smtp://"),
        ("smtp://", "names no host"),
        ("smtp://mail.example.org/inbox", "no path, query or fragment"),
        ("smtp://mail.example.org?tls=1", "no path, query or fragment"),
        ("smtp://:secret@mail.example.org", "a password needs a user name"),
        ("smtp://mail.example.org:99999", "not a valid URL"),
    ],
)
def test_a_url_that_names_no_relay_is_refused_with_the_reason(url, reason):
    with pytest.raises(ValueError, match=reason):
        parse_relay(url)


def test_the_password_is_never_in_the_relays_text_nor_in_the_start_error(monkeypatch):
    relay = parse_relay("smtps://clinic:hunter2@mail.example.org")
    assert "hunter2" not in repr(relay) and "hunter2" not in str(relay)
    monkeypatch.setenv("DOCTORDESK_SMTP_URL", "smtps://clinic:hunter2@mail.example.org/x")
    monkeypatch.setenv("DOCTORDESK_MAIL_FROM", "praxis@clinic.example")
    with pytest.raises(SettingsError) as refused:
        load_settings()
    assert "DOCTORDESK_SMTP_URL" in str(refused.value) and "hunter2" not in str(refused.value)


def test_a_relay_needs_a_sender_and_a_sender_must_be_an_address(monkeypatch):
    monkeypatch.setenv("DOCTORDESK_SMTP_URL", "smtp+starttls://mail.example.org")
    monkeypatch.delenv("DOCTORDESK_MAIL_FROM", raising=False)
    with pytest.raises(SettingsError, match="DOCTORDESK_SMTP_URL needs DOCTORDESK_MAIL_FROM"):
        load_settings()
    monkeypatch.setenv("DOCTORDESK_MAIL_FROM", "not an address")
    with pytest.raises(SettingsError, match="DOCTORDESK_MAIL_FROM"):
        load_settings()
    monkeypatch.setenv("DOCTORDESK_MAIL_FROM", "praxis@clinic.example")
    loaded = load_settings()
    assert (loaded.smtp_url, loaded.mail_from) == ("smtp+starttls://mail.example.org", "praxis@clinic.example")


def test_no_relay_needs_no_sender(monkeypatch):
    monkeypatch.delenv("DOCTORDESK_SMTP_URL", raising=False)
    monkeypatch.delenv("DOCTORDESK_MAIL_FROM", raising=False)
    assert load_settings().smtp_url == ""
