"""The security page's own-access actions in chromium, in English and German, on one live server reached as
``localhost`` (WebAuthn takes no IP address as the relying party): changing one's password (a wrong current one is
said at its field; the other session ends, this one stays, the new password signs in), "sign out everywhere else"
(confirmed in the page's own dialog; the notice says how many ways in ended), and adding a passkey through DevTools'
virtual authenticator (the browser's WebAuthn call; the page then lists it under the name given and shows the
recovery codes once). axe finds nothing on the page with the new parts (docs/accounts.md#security-page)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from doctordesk.domain.accounts.user_agents import describe
from tests.e2e.web import confirm
from tests.e2e.web.conftest import axe_violations
from tests.support.live import LiveServer

pytestmark = pytest.mark.browser

LOCALES = {"en": "en-GB", "de": "de-DE"}
WORDS = {
    "en": {"sign_in": "Sign in", "change": "Change password", "wrong": "Wrong password.",
           "changed": "Your password was changed.", "elsewhere": "Sign out everywhere else",
           "signed_out": "You were signed out everywhere else.", "add": "Add a passkey",
           "added": "The passkey was added."},
    "de": {"sign_in": "Anmelden", "change": "Passwort ändern", "wrong": "Falsches Passwort.",
           "changed": "Ihr Passwort wurde geändert.", "elsewhere": "Überall sonst abmelden",
           "signed_out": "Sie wurden überall sonst abgemeldet.", "add": "Passkey hinzufügen",
           "added": "Der Passkey wurde hinzugefügt."},
}  # fmt: skip


def base(server: LiveServer) -> str:
    return server.url.replace("127.0.0.1", "localhost")


def elsewhere(server: LiveServer, username: str, password: str = "demo") -> dict[str, str]:
    """A session of ``username`` on another device: its bearer headers."""
    with httpx.Client(base_url=server.url, timeout=10) as http:
        answer = http.post("/auth/login", data={"username": username, "password": password})
        assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


def still_in(server: LiveServer, headers: dict[str, str]) -> bool:
    with httpx.Client(base_url=server.url, timeout=10) as http:
        return http.get("/auth/me", headers=headers).status_code == 200


def signed_in(new_page: Any, server: LiveServer, username: str, language: str, password: str = "demo") -> Any:
    page = new_page(base(server), locale=LOCALES[language])
    page.goto("/")
    page.locator(f'html[lang="{language}"] #login-title').wait_for()
    page.locator("#login-username").fill(username)
    page.locator("#login-password").fill(password)
    page.locator("#login-submit").click()
    page.locator('[data-id="title"]').wait_for()
    page.locator("#nav-security").click()
    page.locator('[data-screen="security"] [data-id="sessions"]').wait_for()
    return page


def saved(page: Any, text: str) -> str:
    notice = page.locator('[data-id="saved"]')
    notice.get_by_text(text).wait_for()
    return str(notice.inner_text())


@pytest.mark.parametrize(
    ("language", "username", "on", "unknown"),
    [("en", "patient3", "on", "Unknown device"), ("de", "patient4", "unter", "Unbekanntes Gerät")],
)
def test_each_session_says_which_device_it_is(server, new_page, language, username, on, unknown):
    elsewhere(server, username)  # a client the rules do not know (an HTTP library)
    page = signed_in(new_page, server, username, language)
    agent = page.evaluate("navigator.userAgent")
    this = page.locator('[data-id^="session-"][data-id$="-current"]').get_attribute("data-id")
    assert this is not None
    row = this.removesuffix("-current")
    # The browser's own header names this session ("HeadlessChrome on Linux" or so, "HeadlessChrome unter Linux"
    # in German), on the row's first line.
    device = page.locator(f'[data-id="{row}-device"]').inner_text().strip()
    known = describe(agent)
    assert known is not None and known.system == "Linux", agent
    assert device == f"{known.client} {on} Linux", (device, agent)
    rows = page.locator('[data-id="sessions"] [data-id$="-device"]').all_inner_texts()
    assert sorted(text.strip() for text in rows) == sorted([device, unknown])


@pytest.mark.parametrize(("language", "username"), [("en", "support2"), ("de", "doctor3")])
def test_changing_ones_password_on_the_page(server, new_page, language, username):
    words = WORDS[language]
    phone = elsewhere(server, username)
    page = signed_in(new_page, server, username, language)
    page.locator('[data-id="password-current"] input').fill("not it")
    page.locator('[data-id="password-new"] input').fill("a long new secret")
    page.locator('[data-id="password-again"] input').fill("a long new secret")
    page.get_by_role("button", name=words["change"]).click()
    page.locator('[data-id="password-current"]').get_by_text(words["wrong"]).wait_for()
    assert still_in(server, phone)
    page.locator('[data-id="password-current"] input').fill("demo")
    page.get_by_role("button", name=words["change"]).click()
    saved(page, words["changed"])
    assert page.locator('[data-id="password-new"] input').input_value() == ""
    assert not still_in(server, phone)
    page.reload()
    page.locator('[data-screen="security"] [data-id="sessions"]').wait_for()  # this session stays
    elsewhere(server, username, "a long new secret")


@pytest.mark.parametrize(("language", "username"), [("en", "patient2"), ("de", "support1")])
def test_signing_out_everywhere_else(server, new_page, language, username):
    words = WORDS[language]
    phone, tablet = elsewhere(server, username), elsewhere(server, username)
    page = signed_in(new_page, server, username, language)
    page.get_by_role("button", name=words["elsewhere"]).click()
    assert confirm.answer(page).startswith(words["elsewhere"])
    said = saved(page, words["signed_out"])
    assert ("sessions 2" if language == "en" else "Sitzungen 2") in said
    assert not still_in(server, phone) and not still_in(server, tablet)
    assert page.locator('[data-id^="end-session-"]').count() == 0
    assert page.get_by_role("button", name=words["elsewhere"]).is_disabled()  # nothing else left


@pytest.mark.parametrize(("language", "username"), [("en", "doctor1"), ("de", "doctor2")])
def test_adding_a_passkey_from_the_page(server, new_page, language, username):
    words = WORDS[language]
    page = signed_in(new_page, server, username, language)
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    options = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
               "isUserVerified": True, "automaticPresenceSimulation": True}  # fmt: skip
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]
    page.locator('[data-id="passkey-name"] input').fill("Laptop")
    sent = lambda r: r.url.endswith("/profile/security/passkeys") and r.method == "POST"  # noqa: E731
    with page.expect_request(sent) as request:
        page.get_by_role("button", name=words["add"]).click()
    form = dict(parse_qsl(request.value.post_data))
    # The credential is the object toJSON() gives (in the page's form as JSON text).
    assert json.loads(form["credential"])["id"] and form["name"] == "Laptop"
    saved(page, words["added"])
    page.locator('[data-id="code-10"]').wait_for()  # the first factor: the recovery codes, shown once
    page.locator('[data-id="passkeys"]').get_by_text("Laptop", exact=True).wait_for()
    assert page.locator('[data-id="passkey-name"] input').input_value() == ""
    stored = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert len(stored) == 1 and stored[0]["isResidentCredential"]
    assert axe_violations(page) == []
