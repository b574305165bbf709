"""A code already taken says when the next one comes; an SSO issuer is https, plain http only on a loopback host
with the development setting (docs/accounts.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyotp
import pytest

from doctordesk.domain.accounts import factors as f
from doctordesk.domain.accounts.sso_issuer import is_loopback, issuer_problem

SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"  # fixed: none of its codes around AT is one of the wrong ones below
AT = datetime(2026, 11, 23, 7, 0, 10, tzinfo=UTC)  # ten seconds into a 30-second step


def step_of(at: datetime) -> int:
    return pyotp.TOTP(SECRET).timecode(at)


def test_the_code_that_was_just_taken_is_spent_until_the_next_step():
    code = pyotp.TOTP(SECRET).at(AT)
    assert f.spent_code_wait(SECRET, code, at=AT, last_step=step_of(AT)) == 20
    assert f.spent_code_wait(SECRET, code, at=AT + timedelta(seconds=19), last_step=step_of(AT)) == 1


def test_a_code_taken_one_step_ahead_waits_for_the_step_after_it():
    ahead = AT + timedelta(seconds=30)
    code = pyotp.TOTP(SECRET).at(ahead)
    assert f.spent_code_wait(SECRET, code, at=AT, last_step=step_of(ahead)) == 50


@pytest.mark.parametrize("code", ["000000", "12345", "abcdef", "", "1234567"])
def test_a_wrong_code_is_not_called_spent(code):
    totp = pyotp.TOTP(SECRET)
    assert code not in {totp.generate_otp(step_of(AT) + n) for n in (-1, 0, 1)}
    assert f.spent_code_wait(SECRET, code, at=AT, last_step=step_of(AT)) is None


def test_a_right_code_not_yet_taken_is_not_spent():
    code = pyotp.TOTP(SECRET).at(AT)
    assert f.spent_code_wait(SECRET, code, at=AT, last_step=step_of(AT) - 1) is None
    assert f.spent_code_wait(SECRET, code, at=AT, last_step=None) is None


@pytest.mark.parametrize("issuer", ["https://login.example.org", "https://127.0.0.1/op"])
def test_https_issuers_pass_the_scheme_rule(issuer):
    assert issuer_problem(issuer, allow_http_loopback=False) is None


@pytest.mark.parametrize("issuer", ["http://login.example.org", "http://127.0.0.1:9000", "ftp://x.org", "login.org"])
def test_other_schemes_are_refused_without_the_setting(issuer):
    assert issuer_problem(issuer, allow_http_loopback=False) is not None


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost", "LOCALHOST."])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.1", "localhost.example.org", "127.0.0.1.nip.io", "", None])
def test_hosts_that_are_not_loopback(host):
    assert not is_loopback(host)
