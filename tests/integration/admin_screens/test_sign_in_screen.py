"""The administration screen for signing in (SQLite and PostgreSQL): the second-factor policy ticked and saved, the
users with a factor listed and reset, in English and German, admins only."""

from __future__ import annotations

from datetime import timedelta

import pyotp

from doctordesk.screens.protocol import walk

SCREEN = "/profile/admin/sign-in"


def by_id(page):
    return {e["id"]: e for e in walk(page["elements"])}


async def test_the_policy_is_ticked_saved_and_enforced(client, login):
    admin = await login("admin")
    page = (await client.put(SCREEN, headers=admin.headers)).json()
    shown = by_id(page)
    assert shown["required-doctor"]["value"] is False and shown["nav-sign-in"]["highlighted"] is True
    form = {"required~doctor": "true", "required~admin": "false"}
    saved = await client.post(f"{SCREEN}/policy", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form)
    assert saved.status_code == 200, saved.text
    assert (await client.get("/admin/mfa-policy", headers=admin.headers)).json() == {"required": ["doctor"]}
    refused = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert refused.json()["code"] == "MFA_ENROLMENT_REQUIRED"
    bad = await client.post(f"{SCREEN}/policy", headers=admin.headers, data={"required~doctor": "maybe"})
    assert bad.status_code == 422 and set(bad.json()["fields"]) == {"required~doctor"}


async def test_users_with_a_factor_are_listed_and_reset_in_german(client, login, clock, demo):
    doctor = await login("doctor1")
    secret = (await client.post("/auth/mfa/totp", headers=doctor.headers)).json()["secret"]
    code = pyotp.TOTP(secret).at(clock.now())
    await client.post("/auth/mfa/totp/confirm", json={"code": code}, headers=doctor.headers)
    clock.advance(timedelta(seconds=30))
    admin = await login("admin")
    german = {**admin.headers, "Accept-Language": "de"}
    page = (await client.put(SCREEN, headers=german)).json()
    user = demo.users["doctor1"]
    assert by_id(page)[f"user-{user}-factors"]["value"] == "Authenticator-App"
    assert by_id(page)["title"]["value"] == "Anmeldung"
    reset = await client.post(f"{SCREEN}/{user}/reset", headers=german)
    assert reset.status_code == 200, reset.text
    assert (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).status_code == 200
    # The reset ended the doctor's sessions too (whoever holds the lost phone may be signed in).
    assert (await client.put(SCREEN, headers=doctor.headers)).status_code == 401
