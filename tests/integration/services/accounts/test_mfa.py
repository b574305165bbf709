"""Second factors in process: TOTP on and off at sign-in, recovery codes once each, wrong codes throttled, the
per-role policy with enrolment at the next sign-in, an admin's reset, the audit trail (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pyotp
from sqlalchemy import select

from doctordesk.store.mfa_tables import RecoveryCode, TotpSecret
from doctordesk.store.tables import AuditLog
from tests.support.errors import assert_error

DOCTOR = {"username": "doctor1", "password": "demo"}


async def enable_totp(client, clock, headers) -> tuple[str, list[str]]:
    started = await client.post("/auth/mfa/totp", headers=headers)
    assert started.status_code == 200, started.text
    secret = started.json()["secret"]
    assert started.json()["otpauth_uri"].startswith("otpauth://totp/doctordesk:")
    code = pyotp.TOTP(secret).at(clock.now())
    confirmed = await client.post("/auth/mfa/totp/confirm", json={"code": code}, headers=headers)
    assert confirmed.status_code == 200, confirmed.text
    clock.advance(timedelta(seconds=30))  # the confirming code is spent: sign-ins use the next one
    return secret, confirmed.json()["recovery_codes"]


async def actions(runtime) -> list[str]:
    async with runtime.db.read() as session:
        return list(await session.scalars(select(AuditLog.action).order_by(AuditLog.id)))


async def test_totp_turns_on_and_then_login_needs_the_current_code(client, login, clock, runtime):
    doctor = await login("doctor1")
    secret, codes = await enable_totp(client, clock, doctor.headers)
    assert len(codes) == 10 and len(set(codes)) == 10

    missing = assert_error(await client.post("/auth/login", data=DOCTOR), 401, "MFA_REQUIRED")
    assert missing["factors"] == ["totp", "recovery"]
    wrong = await client.post("/auth/login", data={**DOCTOR, "otp": "000000"})
    assert_error(wrong, 401, "UNAUTHORIZED")
    ok = await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})
    assert ok.status_code == 200 and ok.json()["user"]["username"] == "doctor1"
    # The same code is not taken twice (a code seen on a shoulder or a log is spent).
    again = await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})
    assert_error(again, 401, "UNAUTHORIZED")
    # Only hashes of the recovery codes are stored; the seed is confirmed.
    async with runtime.db.read() as session:
        stored = set(await session.scalars(select(RecoveryCode.code_hash)))
        seed = await session.get(TotpSecret, doctor.user["id"])
    assert len(stored) == 10 and not stored & set(codes) and seed and seed.confirmed_at is not None
    log = await actions(runtime)
    assert {"mfa-totp-started", "mfa-totp-enabled", "mfa-recovery-codes-made"} <= set(log)
    assert log.count("login-failed") == 2


async def test_recovery_codes_work_once_each(client, login, clock):
    doctor = await login("doctor1")
    _secret, codes = await enable_totp(client, clock, doctor.headers)
    first = await client.post("/auth/login", data={**DOCTOR, "otp": codes[0].upper().replace("-", " ")})
    assert first.status_code == 200, first.text
    assert_error(await client.post("/auth/login", data={**DOCTOR, "otp": codes[0]}), 401, "UNAUTHORIZED")
    assert (await client.post("/auth/login", data={**DOCTOR, "otp": codes[1]})).status_code == 200
    status = (await client.get("/auth/mfa", headers=doctor.headers)).json()
    assert status == {"totp": True, "passkeys": 0, "recovery_codes_left": 8, "required": False}


async def test_wrong_codes_are_counted_by_the_login_throttle(client, login, clock):
    doctor = await login("doctor1")
    secret, _codes = await enable_totp(client, clock, doctor.headers)
    for _ in range(5):
        assert_error(await client.post("/auth/login", data={**DOCTOR, "otp": "123456"}), 401, "UNAUTHORIZED")
    locked = await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})
    assert_error(locked, 429, "TOO_MANY_REQUESTS")


async def test_a_second_totp_cannot_replace_an_active_one_and_a_wrong_confirm_is_422(client, login, clock):
    doctor = await login("doctor1")
    started = await client.post("/auth/mfa/totp", headers=doctor.headers)
    bad = await client.post("/auth/mfa/totp/confirm", json={"code": "12345x"}, headers=doctor.headers)
    assert set(assert_error(bad, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"code"}
    assert started.status_code == 200
    await enable_totp(client, clock, doctor.headers)
    assert_error(await client.post("/auth/mfa/totp", headers=doctor.headers), 403, "FORBIDDEN")
    assert_error(await client.post("/auth/mfa/totp"), 401, "UNAUTHORIZED")


async def test_the_policy_makes_a_role_enrol_at_its_next_sign_in(client, login, clock, runtime):
    admin = await login("admin")
    policy = await client.put("/admin/mfa-policy", json={"required": {"doctor": True}}, headers=admin.headers)
    assert policy.json() == {"required": ["doctor"]}
    assert (await login("support1")).token  # other roles sign in as before

    body = assert_error(await client.post("/auth/login", data=DOCTOR), 401, "MFA_ENROLMENT_REQUIRED")
    enrol = {"Authorization": f"Bearer {body['enrolment_token']}"}
    # The enrolment token opens the factor routes only.
    assert_error(await client.get("/auth/me", headers=enrol), 401, "UNAUTHORIZED")
    assert_error(await client.get("/api/appointments", headers=enrol), 401, "UNAUTHORIZED")
    secret = (await client.post("/auth/mfa/totp", headers=enrol)).json()["secret"]
    code = pyotp.TOTP(secret).at(clock.now())
    done = (await client.post("/auth/mfa/totp/confirm", json={"code": code}, headers=enrol)).json()
    assert len(done["recovery_codes"]) == 10
    token = done["login"]["access_token"]
    assert (await client.get("/auth/me", headers={"Authorization": f"Bearer {token}"})).status_code == 200
    # The enrolment token is used up; from now on the code is asked for.
    assert_error(await client.post("/auth/mfa/totp", headers=enrol), 401, "UNAUTHORIZED")
    assert_error(await client.post("/auth/login", data=DOCTOR), 401, "MFA_REQUIRED")
    assert {"mfa-policy", "login-enrolment"} <= set(await actions(runtime))


async def test_an_admin_resets_a_users_factors_and_only_an_admin(client, login, clock, runtime, demo):
    doctor = await login("doctor1")
    await enable_totp(client, clock, doctor.headers)
    path = f"/admin/users/{demo.users['doctor1']}/mfa"
    assert_error(await client.delete(path, headers=doctor.headers), 403, "FORBIDDEN")
    admin = await login("admin")
    assert (await client.delete(path, headers=admin.headers)).status_code == 204
    assert (await client.post("/auth/login", data=DOCTOR)).status_code == 200
    assert (await client.get(path, headers=admin.headers)).json()["recovery_codes_left"] == 0
    assert_error(await client.delete("/admin/users/999999/mfa", headers=admin.headers), 404, "NOT_FOUND")
    async with runtime.db.read() as session:
        reset = await session.scalar(select(AuditLog).where(AuditLog.action == "mfa-reset"))
    assert reset is not None and reset.actor_id == demo.users["admin"] and reset.entity_id == demo.users["doctor1"]


async def test_a_code_with_control_characters_is_a_validation_error_and_counts_nothing(client, login, runtime):
    await login("doctor1")
    body = assert_error(
        await client.post("/auth/login", data={**DOCTOR, "otp": "12\x0034"}), 422, "FIELDS_VALIDATION_ERROR"
    )
    assert set(body["fields"]) == {"otp"}
    assert "login-failed" not in await actions(runtime)
