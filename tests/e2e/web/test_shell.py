"""The web app's shell in a real browser: login, the appointment list, logout, layouts and the security headers."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.e2e.web.conftest import MOBILE, sign_in

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
    sign_in(page, "support1")
    page.reload()
    page.locator('[data-id="title"]').wait_for()
    assert page.locator("#user-role").text_content() == "Support"


def test_the_mobile_layout_stacks_rows_and_hides_the_user_block(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "doctor1")
    row = page.locator('[data-type="Row"]').first
    box = row.bounding_box()
    assert box is not None and box["width"] <= MOBILE["width"]
    assert page.locator("#user").is_hidden()
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
