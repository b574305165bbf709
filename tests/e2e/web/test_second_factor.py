"""Second factors and single sign-on in chromium, on one live server: a role the policy covers sets up an
authenticator app at its next sign-in, then signs in with its codes and with each recovery code once; a passkey is
created and used through DevTools' virtual authenticator (WebAuthn over CDP), in German; "Sign in with …" goes
through a real OpenID provider (pyop) and comes back with the role its groups map to."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pyotp
import pytest

from tests.support.live import LiveServer
from tests.support.openid_provider import OpenIDProvider, running_provider

pytestmark = pytest.mark.browser

OP_USERS = {"sam": {"preferred_username": "sam.support", "name": "Sam Support", "groups": ["support-team"]}}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, OpenIDProvider]]:
    """The live server, its address as the browser uses it (``localhost``: WebAuthn takes no IP address as the
    relying party), and the OpenID provider it trusts."""
    root = tmp_path_factory.mktemp("second-factor")
    live = LiveServer(root / "server")
    base = f"http://localhost:{live.port}"
    callback = f"{base}/auth/sso/clinic/callback"
    with running_provider(root, redirect_uris=[callback], users=OP_USERS, passwords={"sam": "sam-pw"}) as op:
        live.extra_env["DOCTORDESK_SSO_CA_FILE"] = str(op.ca_file)
        live.extra_env["DOCTORDESK_SSO_ALLOW_PRIVATE_ADDRESSES"] = "true"  # the provider runs on loopback
        live.prepare()
        live.start()
        try:
            yield live, base, op
        finally:
            live.stop()


def admin_call(live: LiveServer, method: str, path: str, body: dict[str, Any]) -> None:
    with httpx.Client(base_url=live.url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        answer = http.request(method, path, json=body, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text


def page_at(browser: Any, base: str, **options: Any) -> Any:
    context = browser.new_context(base_url=base, **options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


def password_step(page: Any, username: str) -> None:
    page.goto("/")
    page.locator("#login-username").fill(username)
    page.locator("#login-password").fill("demo")
    page.locator("#login-submit").click()


def with_code(page: Any, username: str, code: str) -> None:
    password_step(page, username)
    page.locator("#login-otp").wait_for()
    page.locator("#login-otp").fill(code)
    page.locator("#login-submit").click()


def log_out(page: Any) -> None:
    page.locator("#logout").click()
    page.locator("#login-username").wait_for()


def test_policy_enrols_an_authenticator_app_then_codes_and_recovery_codes_sign_in(stack, browser):
    live, base, _op = stack
    admin_call(live, "PUT", "/admin/mfa-policy", {"required": {"support": True}})
    page = page_at(browser, base)
    password_step(page, "support1")
    page.get_by_role("heading", name="Set up a second factor").wait_for()
    page.get_by_role("button", name="Use an authenticator app").click()
    page.get_by_label("Code from the app").wait_for()
    assert page.locator("#enrol-qr").get_attribute("src").startswith("data:image/svg+xml")
    assert page.locator("#enrol-qr").evaluate("img => img.complete && img.naturalWidth > 100")
    secret = page.locator("#enrol-secret").text_content()
    assert secret and page.locator("#enrol-uri").text_content().startswith("otpauth://totp/")
    page.get_by_label("Code from the app").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Turn on").click()
    page.locator("#enrol-codes li").first.wait_for()
    codes = page.locator("#enrol-codes li").all_text_contents()
    assert len(codes) == 10 and len(set(codes)) == 10
    page.get_by_role("button", name="Continue").click()
    page.locator('[data-id="title"]').wait_for()
    log_out(page)

    # The password alone is not enough now; the next 30-second step's code is (the current one was just used).
    password_step(page, "support1")
    page.get_by_label("Code from your authenticator app or a recovery code").wait_for()
    assert "authenticator app" in page.locator("#login-error").text_content()
    page.locator("#login-otp").fill(pyotp.TOTP(secret).at(time.time() + 30))
    page.locator("#login-submit").click()
    page.locator('[data-id="title"]').wait_for()
    log_out(page)
    # A recovery code works once.
    with_code(page, "support1", codes[0])
    page.locator('[data-id="title"]').wait_for()
    log_out(page)
    with_code(page, "support1", codes[0])
    page.get_by_text("Wrong code.").wait_for()
    assert page.locator("#login").is_visible()
    page.context.close()


def test_a_passkey_is_created_at_enrolment_and_then_signs_in_without_a_password(stack, browser):
    live, base, _op = stack
    admin_call(live, "PUT", "/admin/mfa-policy", {"required": {"doctor": True}})
    page = page_at(browser, base, locale="de-DE")
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    options = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
               "isUserVerified": True, "automaticPresenceSimulation": True}  # fmt: skip
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]

    password_step(page, "doctor1")
    page.get_by_role("heading", name="Zweiten Faktor einrichten").wait_for()
    with page.expect_request(lambda r: r.url.endswith("/auth/passkeys") and r.method == "POST") as sent:
        page.get_by_role("button", name="Passkey hinzufügen").click()
    # The credential travels as the object toJSON() gives, not as a JSON string.
    assert isinstance(sent.value.post_data_json["credential"], dict)
    page.locator("#enrol-codes li").first.wait_for()
    assert page.locator("#enrol-codes li").count() == 10
    page.get_by_role("button", name="Weiter").click()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-role").text_content() == "Arzt"
    stored = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert len(stored) == 1 and stored[0]["isResidentCredential"]
    log_out(page)

    # The password now asks for the second factor; the passkey alone signs in.
    password_step(page, "doctor1")
    page.locator("#login-otp").wait_for()
    page.get_by_role("button", name="Passkey verwenden").click()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-name").text_content() == "Dr. Anna Berger"
    used = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert used[0]["signCount"] > stored[0]["signCount"]
    page.context.close()


def test_single_sign_on_through_the_clinic_provider_maps_the_role(stack, browser):
    live, base, op = stack
    body = {
        "name": "Clinic Login", "issuer": op.issuer, "client_id": op.client_id, "client_secret": op.client_secret,
        "match_claim": "preferred_username", "role_claim": "groups", "role_map": {"support-team": "support"},
        "create_users": True,
    }  # fmt: skip
    admin_call(live, "PUT", "/admin/sso-providers/clinic", body)
    # The provider's certificate is self-signed (the server trusts it through DOCTORDESK_SSO_CA_FILE).
    page = page_at(browser, base, ignore_https_errors=True)
    page.goto("/")
    page.get_by_role("link", name="Sign in with Clinic Login").click()
    page.locator("#op-username").fill("sam")
    page.locator("#op-password").fill("sam-pw")
    page.locator("#op-submit").click()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-name").text_content() == "Sam Support"
    assert page.locator("#user-role").text_content() == "Support"
    assert "#sso" not in page.url  # the one-time ticket left the address bar
    log_out(page)
    page.get_by_role("link", name="Sign in with Clinic Login").wait_for()  # back on the login page
    page.context.close()
