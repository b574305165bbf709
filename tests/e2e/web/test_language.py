"""English and German in the browser: a German chromium gets the whole app in German (shell, screens, dates,
errors); the switch in the header changes the language in place, and the choice follows the account."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tests.e2e.web.conftest import MOBILE, sign_in
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

REVIEWED = 1  # doctor1's open request in Berlin
READ_THREAD = 3  # the demo's chat where support1 has read doctor1's question


def german_sign_in(page, username: str) -> None:
    page.goto("/")
    page.get_by_role("heading", name="Anmelden").wait_for()
    page.get_by_label("Benutzername").fill(username)
    page.get_by_label("Passwort").fill("demo")
    page.get_by_role("button", name="Anmelden").click()
    page.locator('[data-id="title"]').wait_for()


def test_a_german_browser_gets_the_app_in_german(server, new_page, problems):
    problems.allowed.append("422")
    page = new_page(server.url, locale="de-DE")
    page.goto("/")
    page.get_by_role("heading", name="Anmelden").wait_for()
    assert page.evaluate("document.documentElement.lang") == "de"
    assert page.title() == "Anmelden · doctordesk"
    german_sign_in(page, "doctor1")
    assert page.get_by_role("button", name="Abmelden").is_visible()
    assert page.locator("#user-role").text_content() == "Arzt"
    page.get_by_role("heading", name="Wartet auf Ihre Entscheidung").wait_for()
    assert page.locator(f'[data-id="status-{REVIEWED}"]').text_content() == "Angefragt"
    page.locator(f'[data-id="review-{REVIEWED}"]').click()
    page.get_by_role("heading", name="Prüfen und zusagen").wait_for()
    assert page.get_by_role("button", name="Zusagen").is_visible()
    # The clinic's German format, e.g. "Do., 26. Nov. 2026, 09:00 MEZ".
    when = page.locator('[data-id="requested-time"] time').text_content()
    assert re.fullmatch(r"(Mo|Di|Mi|Do|Fr|Sa|So)\., \d{1,2}\. [A-Z][a-zä]+\.? \d{4}, \d\d:\d\d MES?Z", when), when
    # A server error in German: declining without a reason.
    page.get_by_role("button", name="Ablehnen").click()
    dialog = page.get_by_role("dialog", name="Anfrage ablehnen")
    dialog.wait_for()
    dialog.get_by_role("button", name="Ablehnen").click()
    dialog.locator('[data-id="reason"] .msg-error', has_text="Geben Sie eine Begründung ein.").wait_for()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    # An alternative's day typed the German clinic's way; the changed field's tag and Approve's effect in German.
    page.locator('[data-id="another-alternative"]').click()
    day = page.locator('[data-name="date~1"]')
    assert day.get_attribute("placeholder") == "TT.MM.JJJJ"
    day.fill(f"{MONDAY_MORNING.date() + timedelta(days=14):%d.%m.%Y}")
    day.dispatch_event("change")
    page.locator('[data-id="date~1"].is-highlighted').wait_for()
    assert re.fullmatch(r"\d\d\.\d\d\.\d{4}", day.input_value())  # the server's day shown back, German order
    tag = page.locator('[data-id="date~1"] .field-label').evaluate("e => getComputedStyle(e, '::after').content")
    assert tag == '"geändert"'
    effect = page.locator('[data-id="approve-effect"]')
    assert effect.text_content() == "Sendet dem Patienten 1 Alternative, die er annimmt oder ablehnt."
    # The shell's own words: the connection state and the read mark, then both in English.
    connection = page.locator('#connection[data-status="live"] .connection-text')
    assert connection.text_content() == "Verbunden"
    page.evaluate(f"location.hash = '#/profile/messages/user-chat?appointment-id={READ_THREAD}'")
    read = page.locator('[data-ref^="outgoing-"] .group-read').first
    assert read.text_content() == "✓ Gelesen"
    page.locator("#language").select_option("en")
    page.locator('[data-ref^="outgoing-"] .group-read', has_text="✓ Read").first.wait_for()
    assert connection.text_content() == "Live"


def test_the_header_switch_changes_the_language_in_place_and_the_account_keeps_it(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "support1")
    page.get_by_role("heading", name="Awaiting the doctor's decision").wait_for()
    page.locator("#language").select_option("de")
    page.get_by_role("heading", name="Wartet auf die Entscheidung des Arztes").wait_for()
    assert page.get_by_role("button", name="Abmelden").is_visible()
    assert page.evaluate("document.documentElement.lang") == "de"
    # On the phone the switch and the longer "Abmelden" stay on the top bar's one row.
    boxes = [page.locator(sel).bounding_box() for sel in ("#brand", "#language", "#logout")]
    centers = [b["y"] + b["height"] / 2 for b in boxes]
    assert max(centers) - min(centers) < 8, boxes
    # Another device with an English browser: the account's choice wins once signed in.
    other = new_page(server.url)
    sign_in(other, "support1")
    other.get_by_role("heading", name="Wartet auf die Entscheidung des Arztes").wait_for()
    assert other.locator("#language").input_value() == "de"
    # And back to English.
    other.locator("#language").select_option("en")
    other.get_by_role("heading", name="Awaiting the doctor's decision").wait_for()
    assert other.get_by_role("button", name="Log out").is_visible()


def test_the_sign_in_page_switch_applies_before_signing_in(server, new_page, problems):
    problems.allowed.append("401")
    page = new_page(server.url)
    page.goto("/")
    page.get_by_role("heading", name="Sign in").wait_for()
    page.locator("#login-language").select_option("de")
    page.get_by_role("heading", name="Anmelden").wait_for()
    page.get_by_label("Benutzername").fill("patient1")
    page.get_by_label("Passwort").fill("wrong")
    page.get_by_role("button", name="Anmelden").click()
    page.locator("#login-error", has_text="Benutzername oder Passwort falsch.").wait_for()
