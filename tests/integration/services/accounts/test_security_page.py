"""One's own security page (docs/accounts.md#security-page), for every role: sessions and phones (this one marked),
the authenticator app with its QR code while it is set up, passkeys, recovery codes, each revocable; every change
needs a recent authentication, touches only one's own things (another's is 404) and is audited (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pyotp
import pytest
from sqlalchemy import func, select

from doctordesk.screens.security import qr_data_url
from doctordesk.store.mfa_tables import Passkey, RecoveryCode, TotpSecret
from doctordesk.store.realtime_tables import Device
from tests.integration.services.accounts.test_mfa import enable_totp
from tests.integration.services.accounts.test_recent_authentication import (
    ORIGIN,
    STALE,
    actions,
    add_passkey,
)
from tests.support.errors import assert_error
from tests.support.passkey_authenticator import SoftPasskey
from tests.support.review import find

PAGE = "/profile/security"
PUSH = {"X-Device-Id": "phone-1", "X-Push-Platform": "android", "X-Push-Token": "push-token-1"}


def ids(elements: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for e in elements:
        out.append(e["id"])
        out += ids(e.get("children", []))
    return out


async def shown(client, headers) -> list[dict[str, Any]]:
    page = await client.put(PAGE, headers=headers)
    assert page.status_code == 200, page.text
    return page.json()["elements"]


def patched(answer) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    return answer.json()


async def count(runtime, table, user_id: int) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).where(table.user_id == user_id)) or 0)


@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1", "admin"])
async def test_every_role_sees_its_own_page_with_this_session_marked(client, login, username):
    other = await login(username)
    me = await login(username)
    elements = await shown(client, me.headers)
    shown_ids = ids(elements)
    for section in ("sessions", "authenticator", "passkeys", "recovery", "apps"):
        assert section in shown_ids
    mine = [i for i in shown_ids if i.startswith("session-") and i.endswith("-current")]
    assert len(mine) == 1
    # The other session can be ended, this one only by logging out.
    this = mine[0].split("-")[1]
    assert [i for i in shown_ids if i.startswith("end-session-")] != []
    assert f"end-session-{this}" not in shown_ids
    assert other.token != me.token


async def test_the_page_speaks_german(client, login):
    me = await login("doctor1")
    page = (await client.put(PAGE, headers={**me.headers, "Accept-Language": "de"})).json()
    assert page["title"] == "Sicherheit"
    assert find(page["elements"], "totp-on")["label"] == "Authenticator-App einrichten"


async def test_ending_another_session_signs_it_out_and_is_audited(client, login, runtime):
    phone = await login("doctor1")
    me = await login("doctor1")
    elements = await shown(client, me.headers)
    end = next(e for e in _walk(elements) if e["id"].startswith("end-session-"))
    answer = patched(await client.post(end["action"]["endpoint"], headers=me.headers))
    assert any(p.get("id") == "saved" for p in answer["patches"])
    assert (await client.get("/auth/me", headers=phone.headers)).status_code == 401
    assert (await client.get("/auth/me", headers=me.headers)).status_code == 200
    assert "session-ended" in await actions(runtime)


async def test_another_users_session_phone_passkey_and_app_are_not_found_and_nothing_changes(client, login, runtime):
    victim = await login("doctor2")
    me = await login("doctor1")
    victim_token = next(
        int(e["id"].split("-")[1]) for e in _walk(await shown(client, victim.headers)) if e["id"].endswith("-current")
    )
    before = await actions(runtime)
    for path in (
        f"{PAGE}/sessions/{victim_token}/end",
        f"{PAGE}/devices/1/remove",
        f"{PAGE}/passkeys/1/remove",
        f"{PAGE}/apps/1/revoke",
    ):
        assert_error(await client.post(path, headers=me.headers), 404, "NOT_FOUND")
    assert (await client.get("/auth/me", headers=victim.headers)).status_code == 200
    assert await actions(runtime) == before


async def test_every_change_needs_a_recent_authentication_and_a_refusal_writes_nothing(client, login, clock, runtime):
    other = await login("doctor1")
    me = await login("doctor1")
    clock.advance(STALE)
    before = await actions(runtime)
    for path in (
        f"{PAGE}/sessions/{other.user['id']}/end",
        f"{PAGE}/devices/1/remove",
        f"{PAGE}/passkeys/1/remove",
        f"{PAGE}/totp/start",
        f"{PAGE}/totp/confirm",
        f"{PAGE}/totp/off",
        f"{PAGE}/recovery-codes",
        f"{PAGE}/apps/1/revoke",
    ):
        assert_error(await client.post(path, headers=me.headers), 403, "REAUTHENTICATION_REQUIRED")
    assert await actions(runtime) == before
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200
    # Seeing the page needs no proof.
    assert "sessions" in ids(await shown(client, me.headers))


async def test_setting_up_the_app_shows_its_qr_code_and_key_then_the_recovery_codes_once(client, login, clock, runtime):
    me = await login("doctor1")
    started = patched(await client.post(f"{PAGE}/totp/start", headers=me.headers))
    assert started["patches"]
    elements = await shown(client, me.headers)
    key = find(elements, "totp-key")["value"].replace(" ", "")
    qr = find(elements, "totp-qr")
    assert qr["type"] == "Image" and qr["value"].startswith("data:image/svg+xml")
    assert qr["value"] == qr_data_url(pyotp.TOTP(key).provisioning_uri(name="doctor1", issuer_name="doctordesk"))
    assert qr["label"]
    wrong = await client.post(f"{PAGE}/totp/confirm", headers=me.headers, data={"code": "000000"})
    assert set(assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"code"}
    code = pyotp.TOTP(key).at(clock.now())
    answer = patched(await client.post(f"{PAGE}/totp/confirm", headers=me.headers, data={"code": code}))
    codes = next(p["element"] for p in answer["patches"] if p["op"] == "replace" and p["element"]["id"] == "codes")
    assert len([c for c in codes["children"] if c["id"].startswith("code-")]) == 10
    assert await count(runtime, RecoveryCode, me.user["id"]) == 10
    again = await shown(client, me.headers)
    assert find(again, "totp-off") is not None and find(again, "totp-qr") is None
    assert find(again, "codes")["visible"] is False  # shown on that answer only
    assert "mfa-totp-enabled" in await actions(runtime)


async def test_new_recovery_codes_replace_the_old_ones(client, login, clock, runtime):
    me = await login("doctor1")
    _secret, old = await enable_totp(client, clock, me.headers)
    answer = patched(await client.post(f"{PAGE}/recovery-codes", headers=me.headers))
    codes = next(p["element"] for p in answer["patches"] if p["op"] == "replace")
    new = [c["value"] for c in codes["children"] if c["id"].startswith("code-")]
    assert len(new) == 10 and not set(new) & set(old)
    assert (
        await client.post("/auth/login", data={"username": "doctor1", "password": "demo", "otp": old[0]})
    ).status_code == 401


async def test_turning_the_app_off_and_the_last_factor_of_a_required_role_stays(client, login, clock, runtime):
    admin = await login("admin")
    me = await login("doctor1")
    await enable_totp(client, clock, me.headers)
    policy = {"required": {"doctor": True}}
    assert (await client.put("/admin/mfa-policy", json=policy, headers=admin.headers)).status_code == 200
    assert find(await shown(client, me.headers), "factor-required") is not None
    refused = assert_error(await client.post(f"{PAGE}/totp/off", headers=me.headers), 403, "FORBIDDEN")
    assert "second factor" in refused["message"]
    assert await count(runtime, TotpSecret, me.user["id"]) == 1
    policy = {"required": {"doctor": False}}
    assert (await client.put("/admin/mfa-policy", json=policy, headers=admin.headers)).status_code == 200
    assert find(await shown(client, me.headers), "factor-required") is None
    patched(await client.post(f"{PAGE}/totp/off", headers=me.headers))
    assert await count(runtime, TotpSecret, me.user["id"]) == 0
    assert await count(runtime, RecoveryCode, me.user["id"]) == 0  # they went with the last factor
    assert "mfa-totp-disabled" in await actions(runtime)
    answer = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert answer.status_code == 200


async def test_removing_a_passkey_and_a_phone(client, login, runtime):
    me = await login("doctor1")
    key = SoftPasskey(ORIGIN)
    added = await add_passkey(client, me.headers, key)
    assert added.status_code == 200, added.text
    assert (await client.get("/api/appointments", headers={**me.headers, **PUSH})).status_code == 200
    elements = await shown(client, me.headers)
    assert find(elements, f"passkey-{added.json()['id']}") is not None
    device = next(e for e in _walk(elements) if e["id"].startswith("remove-device-"))
    patched(await client.post(f"{PAGE}/passkeys/{added.json()['id']}/remove", headers=me.headers))
    patched(await client.post(device["action"]["endpoint"], headers=me.headers))
    assert await count(runtime, Passkey, me.user["id"]) == 0
    assert await count(runtime, Device, me.user["id"]) == 0
    done = await actions(runtime)
    assert "mfa-passkey-removed" in done and "push-device-removed" in done


async def test_a_code_already_spent_says_so_and_when_the_next_one_comes(client, login, clock, runtime):
    me = await login("doctor1")
    started = (await client.post("/auth/mfa/totp", headers=me.headers)).json()
    assert started["qr_code"] == qr_data_url(started["otpauth_uri"])  # the QR code of the enrolment at sign-in too
    totp = pyotp.TOTP(started["secret"])
    code = totp.at(clock.now())
    assert (await client.post("/auth/mfa/totp/confirm", json={"code": code}, headers=me.headers)).status_code == 200
    clock.advance(timedelta(seconds=10))  # within the same 30-second step: the next code is 20 seconds away
    form = {"username": "doctor1", "password": "demo", "otp": code}
    body = assert_error(await client.post("/auth/login", data=form), 401, "UNAUTHORIZED")
    assert body["reason"] == "code-used"
    step_ends = 30 - int(clock.now().timestamp()) % 30
    assert body["next_code_in"] == step_ends
    assert "already used" in body["message"] and str(step_ends) in body["message"]
    german = await client.post("/auth/login", data=form, headers={"Accept-Language": "de"})
    assert "bereits verwendet" in german.json()["message"]
    wrong = assert_error(await client.post("/auth/login", data={**form, "otp": "000000"}), 401, "UNAUTHORIZED")
    assert "reason" not in wrong and wrong["message"] == "Wrong code."
    clock.advance(timedelta(seconds=step_ends))
    fresh = await client.post("/auth/login", data={**form, "otp": totp.at(clock.now())})
    assert fresh.status_code == 200, fresh.text


def _walk(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in elements:
        out.append(e)
        out += _walk(e.get("children", []))
    return out
