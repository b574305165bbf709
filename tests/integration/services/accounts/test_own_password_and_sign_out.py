"""One's own password change, "sign out everywhere else" and adding a passkey on the security page
(docs/accounts.md#security-page). The first two need a recent authentication, end every other session, app grant,
stream ticket and phone registration of the user through the one recovery function and keep this session; another
user's nothing. The current password is checked like a sign-in: a wrong one is a counted failed login; a weak or
mistyped new one is a field error and nothing is written. A passkey added from the page is listed, signs in, and
comes with the recovery codes when it is the first factor (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from doctordesk.store.mfa_tables import Passkey
from doctordesk.store.realtime_tables import Device, StreamTicket
from doctordesk.store.tables import AuditLog, LoginThrottle, User
from tests.integration.services.accounts.test_recent_authentication import ORIGIN, STALE, actions, passkey_answer
from tests.integration.smart.conftest import launch, register
from tests.integration.smart.test_recovery_ends_every_way_in import PUSH, app_tokens, fhir_status
from tests.support.errors import assert_error
from tests.support.passkey_authenticator import SoftPasskey
from tests.support.review import find

__all__ = ["launch", "register"]  # the SMART fixtures this module uses

PAGE = "/profile/security"
NEW = {"password": "demo", "new_password": "a new secret 42", "new_password_again": "a new secret 42"}


async def count(runtime, table, user_id: int) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).where(table.user_id == user_id)) or 0)


async def password_hash(runtime, username: str) -> str | None:
    async with runtime.db.read() as session:
        return await session.scalar(select(User.password_hash).where(User.username == username))


async def details(runtime, action: str) -> dict:
    async with runtime.db.read() as session:
        entry = await session.scalar(select(AuditLog).where(AuditLog.action == action).order_by(AuditLog.id.desc()))
    assert entry is not None, action
    return entry.details


def notice(answer) -> str:
    assert answer.status_code == 200, answer.text
    return next(p["set"]["value"] for p in answer.json()["patches"] if p.get("id") == "saved" and "set" in p)


async def everywhere(client, login, register, launch, username: str = "patient1"):
    """A user signed in on a phone (with push and a stream ticket) and through an app, then in this browser."""
    phone = await login(username)
    assert (await client.get("/api/appointments", headers={**phone.headers, **PUSH})).status_code == 200
    assert (await client.post("/profile/stream/ticket", headers=phone.headers)).status_code == 200
    app, refresh = await app_tokens(client, register, launch)
    me = await login(username)
    assert (await client.post("/profile/stream/ticket", headers=me.headers)).status_code == 200
    return phone, app, refresh, me


async def test_the_page_offers_both_and_a_password_form(client, login):
    me = await login("doctor1")
    page = (await client.put(PAGE, headers=me.headers)).json()["elements"]
    assert find(page, "sign-out-elsewhere")["enabled"] is False  # nothing else to sign out of
    names = {find(page, ref)["name"] for ref in ("password-current", "password-new", "password-again")}
    assert names == {"password", "new_password", "new_password_again"}
    assert find(page, "password-new")["props"]["autocomplete"] == "new-password"
    await login("doctor1")
    again = (await client.put(PAGE, headers=me.headers)).json()["elements"]
    assert find(again, "sign-out-elsewhere").get("enabled", True) is True
    german = (await client.put(PAGE, headers={**me.headers, "Accept-Language": "de"})).json()["elements"]
    assert find(german, "password-change")["label"] == "Passwort ändern"
    assert find(german, "sign-out-elsewhere")["label"] == "Überall sonst abmelden"


async def test_signing_out_everywhere_else_ends_every_other_way_in_and_keeps_this_one(
    client, login, register, launch, demo, runtime
):
    phone, app, refresh, me = await everywhere(client, login, register, launch)
    other = await login("doctor1")
    uid = demo.users["patient1"]
    said = notice(await client.post(f"{PAGE}/sign-out-elsewhere", headers=me.headers))
    # Two sessions: the phone's and the browser that allowed the app; the app's access and refresh token.
    assert said == "You were signed out everywhere else. Ended: sessions 2, app tokens 2, phones 1."
    assert (await client.get("/auth/me", headers=phone.headers)).status_code == 401
    assert await fhir_status(client, app) == 401
    assert (await client.post("/oauth/token", data=refresh)).status_code == 400
    assert await count(runtime, Device, uid) == 0
    # This session and its stream ticket stay.
    assert (await client.get("/auth/me", headers=me.headers)).status_code == 200
    assert await count(runtime, StreamTicket, uid) == 1
    assert await details(runtime, "signed-out-elsewhere") == {
        "tokens_revoked": 2, "app_tokens_revoked": 2, "push_devices_removed": 1,
    }  # fmt: skip
    # Another user's session is untouched.
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200


async def test_the_notice_speaks_german(client, login):
    await login("doctor1")
    me = await login("doctor1")
    answer = await client.post(f"{PAGE}/sign-out-elsewhere", headers={**me.headers, "Accept-Language": "de"})
    assert notice(answer) == "Sie wurden überall sonst abgemeldet. Beendet: Sitzungen 1, App-Tokens 0, Telefone 0."


async def test_changing_ones_password_ends_the_other_ways_in_and_keeps_this_session(
    client, login, register, launch, demo, runtime
):
    phone, app, refresh, me = await everywhere(client, login, register, launch)
    other = await login("doctor1")
    said = notice(await client.post(f"{PAGE}/password", data=NEW, headers=me.headers))
    assert said.startswith("Your password was changed.") and "sessions 2, app tokens 2, phones 1" in said
    answer = await client.post(f"{PAGE}/password", data=NEW, headers=me.headers)
    assert answer.status_code == 422  # the old password no longer is the current one
    assert (await client.get("/auth/me", headers=phone.headers)).status_code == 401
    assert await fhir_status(client, app) == 401
    assert (await client.post("/oauth/token", data=refresh)).status_code == 400
    assert (await client.get("/auth/me", headers=me.headers)).status_code == 200
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200
    old = await client.post("/auth/login", data={"username": "patient1", "password": "demo"})
    assert old.status_code == 401
    new = await client.post("/auth/login", data={"username": "patient1", "password": NEW["new_password"]})
    assert new.status_code == 200
    audited = await details(runtime, "password-changed")
    assert audited["tokens_revoked"] == 2 and audited["app_tokens_revoked"] == 2
    assert "a new secret" not in str(audited)


async def test_the_form_is_emptied_after_a_change(client, login):
    me = await login("doctor1")
    answer = await client.post(f"{PAGE}/password", data=NEW, headers=me.headers)
    emptied = {p["id"] for p in answer.json()["patches"] if p.get("set", {}).get("value") == ""}
    assert {"password-current", "password-new", "password-again"} <= emptied


async def test_a_wrong_current_password_is_refused_counted_and_audited(client, login, runtime):
    other = await login("doctor1")
    me = await login("doctor1")
    before = await password_hash(runtime, "doctor1")
    wrong = await client.post(f"{PAGE}/password", data={**NEW, "password": "guess"}, headers=me.headers)
    assert assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"] == {"password": "Wrong password."}
    assert await password_hash(runtime, "doctor1") == before
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200
    assert "password-change-failed" in await actions(runtime)
    async with runtime.db.read() as session:
        throttle = await session.get(LoginThrottle, "doctor1")
    assert throttle is not None and throttle.failures == 1


async def test_wrong_guesses_of_the_current_password_are_throttled_like_logins(client, login, runtime):
    me = await login("doctor1")
    for _ in range(5):
        answer = await client.post(f"{PAGE}/password", data={**NEW, "password": "guess"}, headers=me.headers)
        assert answer.status_code == 422
    refused = await client.post(f"{PAGE}/password", data=NEW, headers=me.headers)
    assert_error(refused, 429, "TOO_MANY_REQUESTS")
    assert "password-change-throttled" in await actions(runtime)
    assert (await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})).status_code == 429


async def test_a_weak_mistyped_or_unchanged_new_password_is_a_field_error_and_nothing_is_written(
    client, login, runtime
):
    other = await login("doctor1")
    me = await login("doctor1")
    before, logged = await password_hash(runtime, "doctor1"), await actions(runtime)
    cases = [
        ({"new_password": "short", "new_password_again": "short"}, {"new_password"}),
        ({"new_password_again": "a new secret 43"}, {"new_password_again"}),
        ({"new_password": "demo", "new_password_again": "demo"}, {"new_password"}),
        ({"new_password": "bad\x01password", "new_password_again": "bad\x01password"}, {"new_password"}),
        ({"password": ""}, {"password"}),
    ]
    for change, fields in cases:
        answer = await client.post(f"{PAGE}/password", data={**NEW, **change}, headers=me.headers)
        assert set(assert_error(answer, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == fields, change
    assert await password_hash(runtime, "doctor1") == before
    assert await actions(runtime) == logged  # no failed login counted either
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200


async def test_both_need_a_recent_authentication_and_a_refusal_writes_nothing(client, login, clock, runtime):
    other = await login("doctor1")
    me = await login("doctor1")
    clock.advance(STALE)
    before, logged = await password_hash(runtime, "doctor1"), await actions(runtime)
    for path, form in ((f"{PAGE}/password", NEW), (f"{PAGE}/sign-out-elsewhere", None)):
        assert_error(await client.post(path, data=form, headers=me.headers), 403, "REAUTHENTICATION_REQUIRED")
    assert await password_hash(runtime, "doctor1") == before and await actions(runtime) == logged
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 200
    proof = await client.post("/auth/reauthenticate", data={"password": "demo"}, headers=me.headers)
    assert proof.status_code == 204, proof.text
    assert (await client.post(f"{PAGE}/sign-out-elsewhere", headers=me.headers)).status_code == 200
    assert (await client.get("/auth/me", headers=other.headers)).status_code == 401


async def test_a_user_of_single_sign_on_has_no_password_to_change(client, login, runtime):
    me = await login("support1")
    async with runtime.db.transaction() as session:
        user = await session.scalar(select(User).where(User.username == "support1"))
        user.password_hash = "!sso"  # as single sign-on makes its users
    page = (await client.put(PAGE, headers=me.headers)).json()["elements"]
    assert find(page, "password-sso") is not None and find(page, "password-change") is None
    wrong = await client.post(f"{PAGE}/password", data=NEW, headers=me.headers)
    assert set(assert_error(wrong, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"password"}
    assert await password_hash(runtime, "support1") == "!sso"


async def page_passkey(client, headers, key: SoftPasskey, **form: str):
    """The security page's "Add a passkey": the challenge from /auth/passkeys/options, the browser's credential (its
    toJSON() object, as JSON text in the page's form) posted to the page."""
    options = (await client.post("/auth/passkeys/options", headers=headers)).json()
    credential = key.create(options["publicKey"])  # the toJSON() object as JSON text
    data = {"ticket": options["ticket"], "credential": credential, **form}
    return await client.post(f"{PAGE}/passkeys", data=data, headers=headers)


async def test_adding_a_passkey_from_the_page_lists_it_shows_the_codes_and_it_signs_in(client, login, runtime):
    me = await login("doctor1")
    key = SoftPasskey(ORIGIN)
    answer = await page_passkey(client, me.headers, key, name="Laptop")
    assert notice(answer) == "The passkey was added."
    codes = next(p["element"] for p in answer.json()["patches"] if p["op"] == "replace")
    assert len([c for c in codes["children"] if c["id"].startswith("code-")]) == 10  # the first factor: codes once
    page = (await client.put(PAGE, headers=me.headers)).json()["elements"]
    names = [e for e in _walk(page) if e["id"].startswith("passkey-") and e["id"].endswith("-name")]
    assert [e["value"] for e in names if e["id"] != "passkey-name"] == ["Laptop"]
    assert "mfa-passkey-added" in await actions(runtime)
    signed_in = await client.post("/auth/passkey/login", json=await passkey_answer(client, key))
    assert signed_in.status_code == 200, signed_in.text
    second = await page_passkey(client, me.headers, SoftPasskey(ORIGIN))  # no name: "Passkey"
    assert notice(second) == "The passkey was added."
    assert not any(p["op"] == "replace" for p in second.json()["patches"])  # codes only with the first factor
    async with runtime.db.read() as session:
        names = list(await session.scalars(select(Passkey.name).where(Passkey.user_id == me.user["id"])))
    assert sorted(names) == ["Laptop", "Passkey"]


async def test_a_passkey_needs_a_recent_authentication_a_shown_name_and_a_real_credential(
    client, login, clock, runtime
):
    me = await login("doctor1")
    bad = await page_passkey(client, me.headers, SoftPasskey(ORIGIN), name="\u2800")  # a Braille blank
    assert set(assert_error(bad, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"name"}
    options = (await client.post("/auth/passkeys/options", headers=me.headers)).json()
    forged = {"ticket": options["ticket"], "credential": json.dumps({"id": "x", "response": {}})}
    bad = await client.post(f"{PAGE}/passkeys", data=forged, headers=me.headers)
    assert set(assert_error(bad, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"credential"}
    clock.advance(STALE)
    stale = {"ticket": "t", "credential": json.dumps({"id": "x"})}
    assert_error(
        await client.post(f"{PAGE}/passkeys", data=stale, headers=me.headers), 403, "REAUTHENTICATION_REQUIRED"
    )
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).where(Passkey.user_id == me.user["id"])) == 0


async def test_another_users_challenge_adds_nothing(client, login, runtime):
    other = await login("doctor2")
    me = await login("doctor1")
    options = (await client.post("/auth/passkeys/options", headers=other.headers)).json()
    credential = SoftPasskey(ORIGIN).create(options["publicKey"])
    taken = await client.post(f"{PAGE}/passkeys", data={"ticket": options["ticket"], "credential": credential},
                              headers=me.headers)  # fmt: skip
    assert set(assert_error(taken, 422, "FIELDS_VALIDATION_ERROR")["fields"]) == {"ticket"}
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Passkey)) == 0


def _walk(elements):
    out = []
    for e in elements:
        out.append(e)
        out += _walk(e.get("children", []))
    return out
