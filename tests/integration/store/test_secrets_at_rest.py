"""Secrets read back to be used are stored encrypted (SQLite and PostgreSQL): the raw column never holds the TOTP
seed or the SMART private key, sign-in and token signing still work, a plain-text row from before encryption is
read and then encrypted by ``doctordesk reencrypt-secrets``, a row sealed with a retired key is read while that key
is listed, and a key that opens nothing stops the start (or, for one stray row, fails the request with a logged
reason and no details)."""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import timedelta

import pyotp
import pytest
from sqlalchemy import text

from doctordesk.app import create_app
from doctordesk.services.smart import keys
from doctordesk.store.db import Database
from doctordesk.store.secrets.encryption import KEY_FILE, SecretBox, SecretKeyError, new_key
from doctordesk.store.secrets.rows import check_keys, reencrypt
from tests.support import processes
from tests.support.errors import assert_error

DOCTOR = {"username": "doctor1", "password": "demo"}


async def enable_totp(client, clock, headers) -> str:
    secret: str = (await client.post("/auth/mfa/totp", headers=headers)).json()["secret"]
    confirmed = await client.post(
        "/auth/mfa/totp/confirm", json={"code": pyotp.TOTP(secret).at(clock.now())}, headers=headers
    )
    assert confirmed.status_code == 200, confirmed.text
    clock.advance(timedelta(seconds=30))
    return secret


async def raw(runtime, sql: str, **params) -> list[str]:
    """Column values as stored, past the column type (what a dump of the database shows)."""
    async with runtime.db.read() as session:
        return [row[0] for row in await session.execute(text(sql), params)]


async def store_raw(runtime, sql: str, **params) -> None:
    async with runtime.db.transaction() as session:
        await session.execute(text(sql), params)


async def sign_in_with_code(client, clock, secret: str):
    clock.advance(timedelta(seconds=30))
    return await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})


async def test_the_totp_seed_is_stored_encrypted_and_still_signs_in(client, login, clock, runtime):
    doctor = await login("doctor1")
    secret = await enable_totp(client, clock, doctor.headers)
    [stored] = await raw(runtime, "SELECT secret FROM totp_secrets WHERE user_id = :u", u=doctor.user["id"])
    assert stored.startswith("fernet:") and secret not in stored
    assert runtime.db.secret_box.open(stored) == secret
    assert (await sign_in_with_code(client, clock, secret)).status_code == 200


async def test_the_smart_signing_key_is_stored_encrypted_and_tokens_verify_with_the_published_key(client, runtime):
    kid, key = await keys.signing_key(runtime)
    [stored] = await raw(runtime, "SELECT private_jwk FROM smart_signing_keys")
    private = key.as_dict(private=True)
    assert stored.startswith("fernet:") and private["d"] not in stored and private["p"] not in stored
    published = (await client.get("/oauth/jwks")).json()["keys"]
    assert [k["kid"] for k in published] == [kid] and "d" not in published[0]
    assert published[0]["n"] == private["n"]


async def test_a_plain_text_seed_from_before_is_read_and_then_encrypted_by_reencrypt(client, login, clock, runtime):
    doctor = await login("doctor1")
    secret = await enable_totp(client, clock, doctor.headers)
    await store_raw(runtime, "UPDATE totp_secrets SET secret = :s", s=secret)  # as stored before encryption
    assert (await sign_in_with_code(client, clock, secret)).status_code == 200

    reports = {r.column: r for r in await reencrypt(runtime.db)}
    assert reports["totp_secrets.secret"].from_plain == 1 and reports["totp_secrets.secret"].current == 0
    [stored] = await raw(runtime, "SELECT secret FROM totp_secrets")
    assert stored.startswith("fernet:") and secret not in stored
    assert (await sign_in_with_code(client, clock, secret)).status_code == 200
    again = {r.column: r for r in await reencrypt(runtime.db)}
    assert (again["totp_secrets.secret"].from_plain, again["totp_secrets.secret"].current) == (0, 1)


async def test_a_value_sealed_with_a_retired_key_is_read_while_that_key_is_listed(
    client, login, clock, runtime, database_url
):
    doctor = await login("doctor1")
    secret = await enable_totp(client, clock, doctor.headers)
    old = runtime.db.secret_box
    [sealed_old] = await raw(runtime, "SELECT secret FROM totp_secrets")
    fresh = new_key()
    both = Database(database_url, secret_box=SecretBox([fresh, old_key(runtime)], source="test"))
    try:
        await check_keys(both)
        [report] = [r for r in await reencrypt(both) if r.column == "totp_secrets.secret"]
        assert (report.from_older_key, report.current) == (1, 0)
        [sealed_new] = await raw(runtime, "SELECT secret FROM totp_secrets")
        assert sealed_new != sealed_old and SecretBox([fresh], source="new").open(sealed_new) == secret
        with pytest.raises(SecretKeyError, match="does not list"):
            old.open(sealed_new)  # the old key alone no longer opens it: it can be retired
    finally:
        await both.dispose()


def old_key(runtime) -> str:
    return (runtime.settings.data_dir / KEY_FILE).read_text().split()[-1]


async def test_a_key_that_opens_no_stored_secret_stops_the_start_naming_the_column(
    client, login, clock, runtime, settings_factory, database_url, tmp_path
):
    doctor = await login("doctor1")
    await enable_totp(client, clock, doctor.headers)
    other = settings_factory(database_url, secrets_key=new_key(), data_dir=tmp_path / "other")
    service = create_app(other)
    with pytest.raises(SecretKeyError, match=r"totp_secrets\.secret of row \d+ .*DOCTORDESK_SECRETS_KEY"):
        async with service.router.lifespan_context(service):
            pass


async def test_one_stray_value_under_an_unlisted_key_fails_that_sign_in_with_a_logged_reason(
    client, login, clock, runtime, caplog
):
    doctor = await login("doctor1")
    secret = await enable_totp(client, clock, doctor.headers)
    stray = SecretBox([new_key()], source="elsewhere").seal(secret)
    await store_raw(runtime, "UPDATE totp_secrets SET secret = :s", s=stray)
    with caplog.at_level(logging.ERROR, logger="doctordesk.web.errors"):
        clock.advance(timedelta(seconds=30))
        failed = await client.post("/auth/login", data={**DOCTOR, "otp": pyotp.TOTP(secret).at(clock.now())})
    body = assert_error(failed, 500, "INTERNAL_ERROR")
    assert "Traceback" not in failed.text and "fernet" not in failed.text and "key" not in str(body).lower()
    [record] = [r for r in caplog.records if "cannot read a stored secret" in r.getMessage()]
    assert record.exc_info is None and "reencrypt-secrets" in record.getMessage()
    with pytest.raises(SecretKeyError, match="does not list"):
        await check_keys(runtime.db)


async def test_the_reencrypt_command_encrypts_plain_rows_and_names_unreadable_ones(
    client, login, clock, runtime, settings, database_url
):
    doctor = await login("doctor1")
    secret = await enable_totp(client, clock, doctor.headers)
    await store_raw(runtime, "UPDATE totp_secrets SET secret = :s", s=secret)
    env = {**os.environ, "DOCTORDESK_DATABASE_URL": database_url, "DOCTORDESK_DATA_DIR": str(settings.data_dir)}
    done = await asyncio.to_thread(processes.run, ["doctordesk", "reencrypt-secrets"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "totp_secrets.secret: 1 encrypted from plain text, 0 from an older key, 0 already current" in done.stdout
    [stored] = await raw(runtime, "SELECT secret FROM totp_secrets")
    assert stored.startswith("fernet:") and runtime.db.secret_box.open(stored) == secret

    stray = SecretBox([new_key()], source="elsewhere").seal(secret)
    await store_raw(runtime, "UPDATE totp_secrets SET secret = :s", s=stray)
    failed = await asyncio.to_thread(processes.run, ["doctordesk", "reencrypt-secrets"], env)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert f"totp_secrets.secret: no key opens the rows {doctor.user['id']}" in failed.stderr
    assert (await raw(runtime, "SELECT secret FROM totp_secrets")) == [stray]  # left as it was


async def test_the_worker_refuses_to_start_with_a_key_that_opens_no_stored_secret(
    client, login, clock, runtime, settings, database_url
):
    doctor = await login("doctor1")
    await enable_totp(client, clock, doctor.headers)
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),
        "DOCTORDESK_SECRETS_KEY": new_key(),  # not the key the database was written with
    }
    refused = await asyncio.to_thread(processes.run, ["doctordesk", "worker", "--once"], env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "totp_secrets.secret of row" in refused.stderr and "DOCTORDESK_SECRETS_KEY does not list" in refused.stderr
