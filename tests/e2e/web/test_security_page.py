"""The security page and single sign-on's screen in chromium, on one live server (docs/accounts.md#security-page):
an authenticator app set up from the page (its QR code an image the page shows), then a sign-out and a sign-in with
the next code, where the code just spent says so and when the next one comes; the page ends another session and
revokes an app, whose refresh token the token endpoint then refuses; a throttled sign-in says why and when to try
again; axe finds nothing on the new screens in English and German."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pyotp
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.e2e.web import confirm
from tests.e2e.web.conftest import axe_violations, sign_in
from tests.support.live import LiveServer, clock_of

pytestmark = pytest.mark.browser

REDIRECT = "https://app.example.org/callback"
VERIFIER = "v" * 20 + "-0123456789_abcdefghijklmnop"
SCOPE = "launch/patient patient/Appointment.rs offline_access"


def bearer(http: httpx.Client, username: str) -> dict[str, str]:
    token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def app_grant(live: LiveServer, patient: dict[str, str]) -> tuple[str, dict[str, str]]:
    """An app registered by the admin and allowed by patient1 (``patient``: the session that allows it): the app's
    name and the refresh form that renews its tokens."""
    with httpx.Client(base_url=live.url, timeout=10) as http:
        body = {"name": "Health diary", "kind": "public", "redirect_uris": [REDIRECT], "allowed_scopes": SCOPE.split()}
        app = http.post("/admin/smart-apps", json=body, headers=bearer(http, "admin")).json()
        query = {
            "response_type": "code", "client_id": app["client_id"], "redirect_uri": REDIRECT, "scope": SCOPE,
            "state": "st", "aud": f"{live.url}/fhir", "code_challenge": create_s256_code_challenge(VERIFIER),
            "code_challenge_method": "S256",
        }  # fmt: skip
        ticket = http.get("/oauth/authorize", params=query).headers["location"].rsplit("/", 1)[1]
        assert http.put(f"/profile/smart/authorize/{ticket}", headers=patient).status_code == 200
        allowed = http.post(f"/profile/smart/authorize/{ticket}/allow", headers=patient)
        code = parse_qs(urlsplit(allowed.json()["leave"]).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                "code_verifier": VERIFIER, "client_id": app["client_id"]}  # fmt: skip
        tokens = http.post("/oauth/token", data=form).json()
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": app["client_id"]}
    return body["name"], refresh


def open_security(page: Any) -> None:
    page.locator("#nav-security").click()
    page.locator('[data-screen="security"] [data-id="sessions"]').wait_for()


def sign_out(page: Any) -> None:
    page.locator("#logout").click()
    page.locator("#login-username").wait_for()


def test_an_app_set_up_on_the_page_signs_in_with_the_next_code_and_a_spent_code_says_so(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor2")
    open_security(page)
    page.locator('[data-id="totp-on"]').click()
    qr = page.locator('[data-id="totp-qr"] img')
    qr.wait_for()
    assert qr.get_attribute("src").startswith("data:image/svg+xml")
    assert qr.get_attribute("alt") == "QR code for your authenticator app"
    assert qr.evaluate("img => img.complete && img.naturalWidth > 100")  # drawn, not a broken image
    secret = page.locator('[data-id="totp-key"] .regular-value').text_content().replace(" ", "")
    totp = pyotp.TOTP(secret)
    spent = totp.at(clock_of(server.url).now())
    page.locator('[data-id="totp-code"] input').fill(spent)
    page.locator('[data-id="totp-confirm"]').click()
    page.locator('[data-id="code-10"]').wait_for()  # the recovery codes, shown once
    page.locator('[data-id="totp-off"]').wait_for()
    sign_out(page)

    page.get_by_label("Username").fill("doctor2")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    page.locator("#login-otp").wait_for()
    page.locator("#login-otp").fill(spent)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("This code was already used.").wait_for()
    message = page.locator("#login-error").text_content()
    assert "Your app shows a new code in" in message and "seconds" in message
    # The next 30-second step's code signs in.
    page.locator("#login-otp").fill(totp.at(clock_of(server.url).now().timestamp() + 30))
    page.get_by_role("button", name="Sign in").click()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-name").text_content() == "Dr. Luis Romero"


def test_the_page_ends_another_session_and_revokes_an_app_whose_refresh_token_then_fails(server, new_page):
    with httpx.Client(base_url=server.url, timeout=10) as http:
        elsewhere = bearer(http, "patient1")
    app, refresh = app_grant(server, elsewhere)
    page = new_page(server.url)
    sign_in(page, "patient1")
    open_security(page)
    ending = page.locator('[data-id^="end-session-"]')
    assert ending.count() == 1
    ending.click()
    assert confirm.answer(page).startswith("End this session?")
    page.locator('[data-id="saved"]').get_by_text("The session was ended.").wait_for()
    assert page.locator('[data-id^="end-session-"]').count() == 0
    row = page.locator('[data-id="apps"] [role="group"]', has_text=app)
    row.locator('[data-id^="revoke-app-"]').click()
    assert confirm.answer(page).startswith("Revoke")
    page.locator('[data-id="saved"]').get_by_text("The app's access was revoked.").wait_for()
    page.locator('[data-id="no-apps"]').wait_for()
    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert http.get("/auth/me", headers=elsewhere).status_code == 401
        refused = http.post("/oauth/token", data=refresh)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_new_screens_have_no_accessibility_violations(server, new_page, language):
    with httpx.Client(base_url=server.url, timeout=10) as http:
        body = {"name": "Clinic Login", "issuer": "https://login.example.org/realms/clinic", "client_id": "dd",
                "client_secret": "s3cret", "role_claim": "groups", "role_map": {"staff": "support"}}  # fmt: skip
        saved = http.put("/admin/sso-providers/clinic", json=body, headers=bearer(http, "admin"))
        assert saved.status_code == 200, saved.text
    page = new_page(server.url, locale={"en": "en-GB", "de": "de-DE"}[language])
    found: list[str] = []

    def check(screen: str) -> None:
        assert page.evaluate("document.documentElement.lang") == language
        found.extend(f"{screen}: {v['id']} ({v['impact']}) {v['help']} at {v['targets']}" for v in axe_violations(page))

    sign_in_as(page, "admin", language)
    open_security(page)
    check("security page")
    page.locator('[data-id="totp-on"]').click()
    page.locator('[data-id="totp-qr"] img').wait_for()
    check("security page, setting up the app")
    page.locator('[data-id="totp-cancel"]').click()
    page.locator('[data-id="totp-on"]').wait_for()
    page.evaluate("location.hash = '#/profile/admin/sso'")
    page.locator('[data-screen="admin-sso"] [data-id="sso-clinic"]').wait_for()
    check("single sign-on")
    assert found == []


def sign_in_as(page: Any, username: str, language: str) -> None:
    """The login form in the page's language (its labels are the ones the language gives them)."""
    page.goto("/")
    page.locator(f'html[lang="{language}"] #login-title').wait_for()
    page.locator("#login-username").fill(username)
    page.locator("#login-password").fill("demo")
    page.locator("#login-submit").click()
    page.locator('[data-id="title"]').wait_for()


def test_a_throttled_sign_in_says_why_and_when_to_try_again(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    for _ in range(5):  # DOCTORDESK_LOGIN_MAX_FAILURES: the address is locked out of the username for 300 s
        page.locator("#login-username").fill("support2")
        page.locator("#login-password").fill("not the password")
        page.locator("#login-submit").click()
        page.get_by_text("Wrong username or password.").wait_for()
        page.locator("#login-error").evaluate("node => { node.textContent = ''; }")
    page.locator("#login-password").fill("demo")  # even the right password waits
    page.locator("#login-submit").click()
    page.get_by_text(
        "Too many failed sign-ins: signing in is paused for your safety. Try again in 5 minutes."
    ).wait_for()
