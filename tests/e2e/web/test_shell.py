"""The web app's shell in a real browser: login, the appointment list, logout, layouts and the security headers;
a SMART launch's consent page reached before signing in, and its answer leaving for the app."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.e2e.web.conftest import MOBILE, sign_in
from tests.support.live import LiveServer

pytestmark = pytest.mark.browser


def test_login_shows_the_appointment_list_and_logout_returns_to_the_login_form(server, new_page):
    page = new_page(server.url)
    page.goto("/")
    page.get_by_role("heading", name="Sign in").wait_for()
    sign_in(page, "doctor1")
    assert page.get_by_role("heading", name="Appointments", level=1).is_visible()
    assert page.locator("#user-name").text_content() == "Dr. Anna Berger"
    section = page.locator('[data-id="needs-decision"]')
    assert section.locator('[data-type="Row"]').count() >= 3
    assert section.get_by_role("button", name="Review and approve").first.is_visible()
    assert "token" not in page.url and "Bearer" not in page.url
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    assert page.locator('[data-id="title"]').count() == 0
    # The token is gone: a reload stays on the login form.
    page.reload()
    page.get_by_role("heading", name="Sign in").wait_for()


def test_a_wrong_password_is_refused_with_a_message_and_no_screen(server, new_page, problems):
    problems.allowed.append("401")
    page = new_page(server.url)
    page.goto("/")
    page.get_by_label("Username").fill("doctor1")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    alert = page.locator("#login-error")
    alert.wait_for()
    assert alert.text_content() == "Wrong username or password."
    assert page.locator("#main-screen").is_hidden()


def test_the_session_survives_a_reload_of_the_tab(server, new_page):
    page = new_page(server.url)
    paths: list[str] = []
    page.on("request", lambda r: paths.append(urlsplit(r.url).path))
    sign_in(page, "support1")
    page.reload()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-role").text_content() == "Support"
    # Each load reads the short list of endpoints a real-time message may name, never the whole API description.
    assert paths.count("/realtime/endpoints") == 2 and "/openapi.json" not in paths


def test_the_mobile_layout_stacks_rows_and_names_the_user_without_the_role(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "doctor1")
    row = page.locator('[data-type="Row"]').first
    box = row.bounding_box()
    assert box is not None and box["width"] <= MOBILE["width"]
    assert page.locator("#user-name").is_visible() and page.locator("#user-role").is_hidden()
    # Nothing is wider than the screen (no horizontal scrolling).
    assert page.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]


def test_every_call_carries_the_client_id_and_layout_headers(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    seen: list[dict[str, str]] = []
    # EventSource cannot send headers: the stream names its client in the query and uses a ticket instead.
    page.on("request", lambda r: seen.append(r.headers) if "/profile/" in r.url and "/stream?" not in r.url else None)
    sign_in(page, "doctor1")
    assert seen
    for headers in seen:
        assert re.fullmatch(r"web-[0-9a-f]{24}", headers["x-client-id"])
        assert headers["x-layout"] == "mobile"
        assert headers["authorization"].startswith("Bearer ")


def test_the_web_app_is_served_with_a_strict_content_security_policy(server):
    for path in ("/", "/js/main.js", "/app.css"):
        response = httpx.get(server.url + path)
        assert response.status_code == 200
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    assert httpx.get(server.url + "/js/main.js").headers["content-type"].startswith("text/javascript")


def test_at_200_percent_zoom_the_screens_reflow_without_horizontal_scrolling(server, new_page):
    # 200 % zoom of a 1280 x 860 window leaves 640 x 430 CSS pixels.
    page = new_page(server.url, viewport={"width": 640, "height": 430})
    sign_in(page, "doctor1")
    assert page.evaluate("document.documentElement.scrollWidth") <= 640
    page.locator('[data-id="review-2"]').click()
    page.locator('[data-id="approve"]').wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 640


def test_the_keyboard_alone_opens_a_screen_and_focus_moves_to_its_heading(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    page.locator('[data-id="review-2"]').focus()
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Review and approve").wait_for()
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.textContent === 'Review and approve'"
    )
    page.keyboard.press("Tab")
    focused = page.evaluate(
        "(() => { const e = document.activeElement; const s = getComputedStyle(e);"
        " return [e.tagName, s.outlineStyle, s.outlineWidth]; })()"
    )
    assert focused[0] in {"BUTTON", "A", "INPUT", "SELECT", "TEXTAREA"}
    assert focused[1] == "solid" and focused[2] == "3px"  # a visible focus ring


# --- a SMART launch: the authorization endpoint opens the consent page; a user who is not signed in signs in first
# and comes back to it; Allow sends the browser to the app's redirect URI with a code and the app's state.

REDIRECT = "http://127.0.0.1:9/callback"  # intercepted by the browser context: nothing listens there
SCOPE = "launch/patient patient/Appointment.rs"


def _register(base: str) -> str:
    with httpx.Client(base_url=base, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        body = {"name": "Browser app", "kind": "public", "redirect_uris": [REDIRECT], "allowed_scopes": SCOPE.split()}
        answer = http.post("/admin/smart-apps", headers={"Authorization": f"Bearer {token}"}, json=body)
        assert answer.status_code == 201, answer.text
        client_id: str = answer.json()["client_id"]
        return client_id


def test_a_launch_signs_in_first_then_allow_returns_to_the_app(server: LiveServer, new_page: Any) -> None:
    client_id = _register(server.url)
    query = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "scope": SCOPE,
        "state": "browser-state", "aud": f"{server.url}/fhir", "code_challenge_method": "S256",
        "code_challenge": create_s256_code_challenge("b" * 43),
    }  # fmt: skip
    page = new_page(server.url)
    reached: list[str] = []

    def callback(route: Any) -> None:
        reached.append(route.request.url)
        route.fulfill(status=200, body="back in the app", content_type="text/plain")

    page.context.route(f"{REDIRECT}**", callback)
    page.goto(f"/oauth/authorize?{urlencode(query)}")
    page.get_by_label("Username").fill("patient1")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    page.locator('[data-id="title"]', has_text="Allow Browser app?").wait_for()
    assert "/profile/smart/authorize/" in page.url
    assert page.get_by_text("read, search: Appointment of the patient").is_visible()
    assert page.locator('[data-id="patient"]').count() == 0  # a patient launches for themselves
    page.locator('[data-id="allow"]').click()
    page.wait_for_url(f"{REDIRECT}**")
    back = {k: v[0] for k, v in parse_qs(urlsplit(reached[0]).query).items()}
    assert back["state"] == "browser-state" and len(back["code"]) >= 40
