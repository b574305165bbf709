"""Each session on the security page says which device it is (docs/accounts.md#security-page): named at sign-in from
the User-Agent header (the client and the system, stored apart), whichever way one signs in (password, passkey, the
completion of an enrolment), and put into words in the reader's language ("Firefox on Windows", "Firefox unter
Windows"); the header itself is stored nowhere; no known client is "Unknown device" (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pyotp
from sqlalchemy import select, update

from doctordesk.store.tables import AccessToken
from tests.integration.services.accounts.test_recent_authentication import ORIGIN, add_passkey, passkey_answer
from tests.support.errors import assert_error
from tests.support.passkey_authenticator import SoftPasskey
from tests.support.review import find
from tests.support.user_agents import CHROME_ANDROID, FIREFOX_WINDOWS, SAFARI_IPHONE

PAGE = "/profile/security"
DOCTOR = {"username": "doctor1", "password": "demo"}


def bearer(answer) -> dict[str, str]:
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def sign_in(client, user_agent: str | None, **form: str) -> dict[str, str]:
    """A password sign-in sending ``user_agent``, or no User-Agent header at all (None)."""
    request = client.build_request("POST", "/auth/login", data={**DOCTOR, **form})
    if user_agent is None:
        del request.headers["User-Agent"]
    else:
        request.headers["User-Agent"] = user_agent
    return bearer(await client.send(request))


async def sessions(client, headers, language: str = "en") -> dict[str, dict[str, Any]]:
    """The page's session rows by token id: their elements by what follows ``session-{id}-``."""
    page = await client.put(PAGE, headers={**headers, "Accept-Language": language})
    assert page.status_code == 200, page.text
    rows = [e for e in find(page.json()["elements"], "sessions")["children"] if e["type"] == "Row"]
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not row["id"].startswith("session-"):
            continue
        prefix = row["id"] + "-"
        out[row["id"].removeprefix("session-")] = {c["id"].removeprefix(prefix): c for c in row["children"]}
    return out


def devices(rows: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(row["device"]["value"] for row in rows.values())


async def stored(runtime, user_id: int) -> list[dict[str, Any]]:
    async with runtime.db.read() as session:
        tokens = await session.scalars(select(AccessToken).where(AccessToken.user_id == user_id))
        return [{c.key: getattr(t, c.key) for c in AccessToken.__table__.columns} for t in tokens]


async def test_two_sign_ins_show_two_devices_and_the_header_is_stored_nowhere(client, runtime, demo):
    desk = await sign_in(client, FIREFOX_WINDOWS)
    phone = await sign_in(client, CHROME_ANDROID)
    rows = await sessions(client, desk)
    assert devices(rows) == ["Chrome Mobile on Android", "Firefox on Windows"]
    # The device is the row's first line, a plain line of text; this session is the desk's.
    for row in rows.values():
        assert list(row)[0] == "device" and row["device"]["type"] == "Regular"
    (current,) = [row for row in rows.values() if "current" in row]
    assert current["device"]["value"] == "Firefox on Windows"
    assert devices(await sessions(client, phone)) == devices(rows)

    tokens = await stored(runtime, demo.users["doctor1"])
    names = sorted((t["device_client"], t["device_system"], t["device"]) for t in tokens)
    assert names == [("Chrome Mobile", "Android", None), ("Firefox", "Windows", None)]
    values = [str(v) for t in tokens for v in t.values() if v is not None]
    for header in (FIREFOX_WINDOWS, CHROME_ANDROID):
        for piece in (header, header[:40], "Mozilla/5.0", "Gecko", "Pixel 8", "rv:133.0"):
            assert not any(piece in value for value in values), piece


async def test_a_sign_in_without_a_known_client_is_an_unknown_device_in_english_and_german(client, demo):
    headers = await sign_in(client, None)
    await sign_in(client, "python-httpx/0.28.1")  # a header that names nothing known
    rows = await sessions(client, headers)
    assert devices(rows) == ["Unknown device", "Unknown device"]
    assert devices(await sessions(client, headers, "de")) == ["Unbekanntes Gerät", "Unbekanntes Gerät"]


async def test_a_long_header_is_cut_and_still_names_the_device(client, runtime, demo):
    padded = FIREFOX_WINDOWS + " " + "x" * 4000
    headers = await sign_in(client, padded)
    assert devices(await sessions(client, headers)) == ["Firefox on Windows"]
    (token,) = await stored(runtime, demo.users["doctor1"])
    assert (token["device_client"], token["device_system"]) == ("Firefox", "Windows")


async def test_a_passkey_sign_in_records_its_device(client, login):
    doctor = await login("doctor1")  # the test client's own header: no known device
    passkey = SoftPasskey(ORIGIN)
    added = await add_passkey(client, doctor.headers, passkey)
    assert added.status_code == 200, added.text
    answer = await passkey_answer(client, passkey)
    phone = bearer(await client.post("/auth/passkey/login", json=answer, headers={"User-Agent": SAFARI_IPHONE}))
    rows = await sessions(client, phone)
    assert devices(rows) == ["Mobile Safari on iOS", "Unknown device"]
    (current,) = [row for row in rows.values() if "current" in row]
    assert current["device"]["value"] == "Mobile Safari on iOS"


async def test_the_sign_in_an_enrolment_completes_records_its_device(client, login, clock):
    admin = await login("admin")
    policy = await client.put("/admin/mfa-policy", json={"required": {"doctor": True}}, headers=admin.headers)
    assert policy.status_code == 200, policy.text
    laptop = {"User-Agent": FIREFOX_WINDOWS}
    body = assert_error(await client.post("/auth/login", data=DOCTOR, headers=laptop), 401, "MFA_ENROLMENT_REQUIRED")
    enrol = {"Authorization": f"Bearer {body['enrolment_token']}", **laptop}
    secret = (await client.post("/auth/mfa/totp", headers=enrol)).json()["secret"]
    code = pyotp.TOTP(secret).at(clock.now())
    done = await client.post("/auth/mfa/totp/confirm", json={"code": code}, headers=enrol)
    assert done.status_code == 200, done.text
    headers = {"Authorization": f"Bearer {done.json()['login']['access_token']}"}
    assert devices(await sessions(client, headers)) == ["Firefox on Windows"]


async def test_a_german_users_page_names_the_device_in_german(client, demo):
    desk = await sign_in(client, FIREFOX_WINDOWS)
    await sign_in(client, "curl/8.5.0")  # one name alone reads the same in both languages
    chosen = await client.put("/profile/language", data={"language": "de"}, headers=desk)
    assert chosen.status_code == 200, chosen.text
    # The user's stored choice decides, whatever the browser asks for.
    rows = await sessions(client, desk, "en")
    assert devices(rows) == ["Firefox unter Windows", "curl"]
    (current,) = [row for row in rows.values() if "current" in row]
    assert current["device"]["value"] == "Firefox unter Windows"


async def test_a_session_whose_device_was_stored_whole_shows_it_as_it_is(client, runtime, demo):
    headers = await sign_in(client, None)
    async with runtime.db.transaction() as session:
        await session.execute(
            update(AccessToken).where(AccessToken.user_id == demo.users["doctor1"]).values(device="Opera on Linux")
        )
    assert devices(await sessions(client, headers, "de")) == ["Opera on Linux"]
