"""Recent authentication (step-up): a session whose sign-in is older than DOCTORDESK_REAUTH_SECONDS cannot change
how the account signs in — no passkey, no authenticator app, no new recovery codes, no app allowed — until its
holder proves who they are again (password and code, or a passkey), throttled like a sign-in (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pyotp
from sqlalchemy import func, select

from doctordesk.store.mfa_tables import Passkey, RecoveryCode, TotpSecret
from doctordesk.store.tables import AuditLog
from tests.integration.services.accounts.test_mfa import DOCTOR, enable_totp
from tests.support.errors import assert_error
from tests.support.passkey_authenticator import SoftPasskey

ORIGIN = "http://testserver"
STALE = timedelta(seconds=601)


async def add_passkey(client, headers, passkey: SoftPasskey):
    options = await client.post("/auth/passkeys/options", headers=headers)
    if options.status_code != 200:
        return options
    body = {"ticket": options.json()["ticket"], "credential": passkey.create(options.json()["publicKey"])}
    return await client.post("/auth/passkeys", json=body, headers=headers)


async def passkey_answer(client, passkey: SoftPasskey) -> dict[str, str]:
    options = (await client.post("/auth/passkey/options")).json()
    return {"ticket": options["ticket"], "credential": passkey.get(options["publicKey"])}


async def stored(runtime, user_id: int) -> tuple[set[str], int, str | None]:
    async with runtime.db.read() as session:
        codes = set(await session.scalars(select(RecoveryCode.code_hash).where(RecoveryCode.user_id == user_id)))
        keys = int(await session.scalar(select(func.count()).where(Passkey.user_id == user_id)) or 0)
        seed = await session.get(TotpSecret, user_id)
        return codes, keys, seed.secret if seed else None


async def actions(runtime) -> list[str]:
    async with runtime.db.read() as session:
        return list(await session.scalars(select(AuditLog.action).order_by(AuditLog.id)))


async def signed_in_with_code(client, secret: str, clock) -> dict[str, str]:
    answer = await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def test_a_stale_session_is_refused_at_every_door_and_nothing_is_written(client, login, clock, runtime):
    doctor = await login("doctor1")
    secret, _codes = await enable_totp(client, clock, doctor.headers)
    stolen = await signed_in_with_code(client, secret, clock)
    clock.advance(STALE)
    before = await stored(runtime, doctor.user["id"])
    doors = [
        ("/auth/mfa/recovery-codes", None),
        ("/auth/passkeys/options", None),
        ("/auth/passkeys", {"ticket": "x" * 20, "credential": "{}"}),
        ("/auth/mfa/totp", None),
        ("/auth/mfa/totp/confirm", {"code": "123456"}),
    ]
    for path, body in doors:
        refused = assert_error(await client.post(path, json=body, headers=stolen), 403, "REAUTHENTICATION_REQUIRED")
        assert refused["message"]
    assert await stored(runtime, doctor.user["id"]) == before
    # The session itself still works for everything else.
    assert (await client.get("/auth/mfa", headers=stolen)).json()["recovery_codes_left"] == 10


async def test_a_fresh_session_signed_in_without_the_second_factor_is_refused(client, login, clock):
    first = await login("doctor1")
    other = await login("doctor1")
    await enable_totp(client, clock, other.headers)  # turned on in another session: that one holds the factor
    assert (await client.post("/auth/mfa/recovery-codes", headers=other.headers)).status_code == 200
    refused = await client.post("/auth/mfa/recovery-codes", headers=first.headers)
    assert_error(refused, 403, "REAUTHENTICATION_REQUIRED")


async def test_reauthenticating_with_password_and_code_opens_the_doors_again(client, login, clock, runtime):
    doctor = await login("doctor1")
    secret, codes = await enable_totp(client, clock, doctor.headers)
    headers = await signed_in_with_code(client, secret, clock)
    clock.advance(STALE)
    assert_error(await client.post("/auth/mfa/recovery-codes", headers=headers), 403, "REAUTHENTICATION_REQUIRED")

    # The password alone is not enough for an account with a second factor: the code is asked for.
    missing = await client.post("/auth/reauthenticate", data={"password": "demo"}, headers=headers)
    body = assert_error(missing, 422, "FIELDS_VALIDATION_ERROR")
    assert set(body["fields"]) == {"otp"} and body["factors"] == ["totp", "recovery"]
    code = pyotp.TOTP(secret).at(clock.now())
    done = await client.post("/auth/reauthenticate", data={"password": "demo", "otp": code}, headers=headers)
    assert done.status_code == 204, done.text

    renewed = await client.post("/auth/mfa/recovery-codes", headers=headers)
    assert renewed.status_code == 200 and set(renewed.json()["recovery_codes"]).isdisjoint(codes)
    added = await add_passkey(client, headers, SoftPasskey(ORIGIN))
    assert added.status_code == 200, added.text
    # The proof ages again.
    clock.advance(STALE)
    assert_error(await client.post("/auth/mfa/recovery-codes", headers=headers), 403, "REAUTHENTICATION_REQUIRED")
    assert "reauthenticated" in await actions(runtime)


async def test_a_fresh_sign_in_counts_and_a_passkey_re_authenticates(client, login, clock, runtime):
    doctor = await login("doctor1")  # no factor yet: the password is the whole proof
    passkey = SoftPasskey(ORIGIN)
    added = await add_passkey(client, doctor.headers, passkey)
    assert added.status_code == 200, added.text
    assert len(added.json()["recovery_codes"]) == 10
    # The passkey signs in as both factors.
    signed_in = await client.post("/auth/passkey/login", json=await passkey_answer(client, passkey))
    assert signed_in.status_code == 200, signed_in.text
    headers = {"Authorization": f"Bearer {signed_in.json()['access_token']}"}
    assert (await client.post("/auth/mfa/recovery-codes", headers=headers)).status_code == 200

    clock.advance(STALE)
    assert_error(await client.post("/auth/mfa/recovery-codes", headers=headers), 403, "REAUTHENTICATION_REQUIRED")
    # Another user's passkey does not confirm this one.
    other = await login("doctor2")
    stranger = SoftPasskey(ORIGIN)
    assert (await add_passkey(client, other.headers, stranger)).status_code == 200
    wrong = await client.post("/auth/reauthenticate/passkey", json=await passkey_answer(client, stranger),
                              headers=headers)  # fmt: skip
    assert set(assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"credential"}
    right = await client.post("/auth/reauthenticate/passkey", json=await passkey_answer(client, passkey),
                              headers=headers)  # fmt: skip
    assert right.status_code == 204, right.text
    assert (await client.post("/auth/mfa/recovery-codes", headers=headers)).status_code == 200


async def test_a_wrong_password_at_reauthentication_is_throttled_like_a_login(client, login, clock, runtime):
    doctor = await login("doctor1")
    clock.advance(STALE)
    assert_error(await client.post("/auth/passkeys/options", headers=doctor.headers), 403, "REAUTHENTICATION_REQUIRED")
    for _ in range(5):
        wrong = await client.post("/auth/reauthenticate", data={"password": "guess"}, headers=doctor.headers)
        assert set(assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"password"}
    locked = await client.post("/auth/reauthenticate", data={"password": "demo"}, headers=doctor.headers)
    assert_error(locked, 429, "TOO_MANY_REQUESTS")
    assert int(locked.headers["Retry-After"]) > 0
    # The same count as sign-ins: the login from this address is locked out too.
    assert_error(await client.post("/auth/login", data=DOCTOR), 429, "TOO_MANY_REQUESTS")
    log = await actions(runtime)
    assert log.count("reauthentication-failed") == 5 and "reauthentication-throttled" in log
    assert_error(await client.post("/auth/passkeys/options", headers=doctor.headers), 403, "REAUTHENTICATION_REQUIRED")


async def test_without_a_session_re_authentication_is_401(client, demo):
    assert_error(await client.post("/auth/reauthenticate", data={"password": "demo"}), 401, "UNAUTHORIZED")
