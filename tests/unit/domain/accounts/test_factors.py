"""The rules of second factors and of single sign-on's claims, without I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyotp

from doctordesk.domain.accounts import factors as f
from doctordesk.domain.accounts import sso_claims
from doctordesk.domain.roles import Role

AT = datetime(2026, 11, 25, 9, 0, 10, tzinfo=UTC)


def test_a_code_is_taken_in_its_step_and_one_step_either_side_but_never_twice():
    secret = f.new_totp_secret()
    totp = pyotp.TOTP(secret)
    step = f.totp_step(secret, totp.at(AT), at=AT, last_step=None)
    assert step == totp.timecode(AT)
    assert f.totp_step(secret, totp.at(AT - timedelta(seconds=30)), at=AT, last_step=None) == step - 1
    assert f.totp_step(secret, totp.at(AT + timedelta(seconds=30)), at=AT, last_step=None) == step + 1
    assert f.totp_step(secret, totp.at(AT + timedelta(seconds=90)), at=AT, last_step=None) is None
    assert f.totp_step(secret, totp.at(AT), at=AT, last_step=step) is None  # spent
    assert f.totp_step(secret, "12a456", at=AT, last_step=None) is None


def test_recovery_codes_are_ten_distinct_and_read_in_any_case_or_spacing():
    codes = f.new_recovery_codes()
    assert len(set(codes)) == 10 and all(f.looks_like_recovery_code(c) for c in codes)
    code = codes[0]
    typed = code.upper().replace("-", " ")
    assert f.recovery_hash(typed) == f.recovery_hash(code) and f.recovery_hash(code) != code
    assert not f.looks_like_recovery_code("123456")


def test_factors_offer_recovery_codes_only_beside_a_factor():
    assert f.Factors(totp=True, passkeys=1, recovery_left=3).kinds() == ["totp", "passkey", "recovery"]
    assert f.Factors(totp=False, passkeys=0, recovery_left=3).kinds() == []
    assert f.policy_of(["doctor"]).requires(Role.DOCTOR) and not f.policy_of([]).requires(Role.ADMIN)


def test_the_role_comes_from_the_first_mapped_group_and_only_creatable_roles():
    groups = {"groups": ["staff", "it-admins", "support-team"]}
    mapping = {"support-team": "support", "it-admins": "admin", "staff": "doctor"}
    assert sso_claims.mapped_role(groups, "groups", mapping, None) is Role.ADMIN
    assert sso_claims.mapped_role({"groups": "visitors"}, "groups", mapping, None) is None
    assert sso_claims.mapped_role({}, "groups", mapping, "support") is Role.SUPPORT
    assert sso_claims.mapped_role({}, None, {}, "doctor") is None


def test_an_unverified_email_finds_nobody_and_odd_names_make_no_user():
    assert sso_claims.match_value({"email": "a@b.example", "email_verified": False}, "email") is None
    assert sso_claims.match_value({"email": " A@b.example "}, "email") == "A@b.example"
    assert sso_claims.new_username({"preferred_username": "Sam.Support"}, "preferred_username") == "sam.support"
    assert sso_claims.new_username({"preferred_username": "sam support"}, "preferred_username") is None
