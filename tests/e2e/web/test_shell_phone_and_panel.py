"""The shell's details for daily use: the phone's top bar says who is signed in and the connection
state in words; toasts on a phone come one at a time and never cover the list; the chat panel opens again after a
reload where it was, with its draft; in English and in German."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import MOBILE
from tests.e2e.web.test_chat_drafts import type_and_wait_for_the_save

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 800}
LANGUAGES = {"en": ("en-GB", "Live", "Offline"), "de": ("de-DE", "Verbunden", "Offline")}
PANEL_CHAT = {"en": 1, "de": 2}  # doctor1's appointments with chat, one per language (drafts stay per thread)
BOX = '#panel [data-id="content"] textarea'


def _box(page: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] | None = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and (a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])
    )


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_phones_top_bar_names_the_user_and_says_the_connection_state_in_words(server, new_page, language):
    locale, live, offline = LANGUAGES[language]
    page = new_page(server.url, viewport=MOBILE, locale=locale)
    sign_in_as(page, "doctor1")
    name = page.locator("#user-name")
    assert name.is_visible() and name.inner_text() == "Dr. Anna Berger"
    assert name.evaluate("n => n.scrollWidth <= n.clientWidth")  # the whole name, not cut
    state = page.locator('#connection[data-status="live"] .connection-text')
    state.wait_for()
    assert state.is_visible() and state.inner_text() == live
    # Name and state share the first row with "Log out", nothing wider than the phone; the main links (here
    # Security) are on a line of their own below, whole.
    user, logout, security = _box(page, "#user"), _box(page, "#logout"), _box(page, "#nav-security")
    assert user["y"] < logout["y"] + logout["height"] and logout["y"] < user["y"] + user["height"]
    assert logout["x"] + logout["width"] <= MOBILE["width"] and not _overlap(user, logout)
    assert security["y"] >= max(user["y"] + user["height"], logout["y"] + logout["height"])
    assert page.locator("#nav-security").evaluate("n => n.scrollWidth <= n.clientWidth")
    page.context.set_offline(True)
    page.locator('#connection[data-status="offline"]').wait_for()
    assert page.locator("#connection .connection-text").inner_text() == offline
    page.context.set_offline(False)
    page.locator('#connection[data-status="live"]').wait_for()


@pytest.mark.parametrize("language", ["en", "de"])
def test_on_a_phone_toasts_come_one_at_a_time_and_cover_no_row(server, new_page, language):
    page = new_page(server.url, viewport=MOBILE, locale=LANGUAGES[language][0])
    sign_in_as(page, "doctor1")
    rows = '[data-type="Row"][data-id^="appointment-"]'
    page.locator(rows).first.wait_for()
    page.evaluate(
        """() => {
            const shell = window.doctordesk.shell;
            shell.notify({ text: "The appointment was approved and the patient told.", level: "info" });
            shell.notify({ text: "A second notice arriving at once.", level: "info" });
        }"""
    )
    toasts = page.locator(".toast")
    assert toasts.count() == 1 and toasts.first.inner_text() == "A second notice arriving at once."
    toast = _box(page, ".toast")
    assert toast["x"] >= 0 and toast["x"] + toast["width"] <= MOBILE["width"]
    for selector in (rows, f"{rows} .link"):
        for part in page.locator(selector).all():
            box = part.bounding_box()
            assert box is None or not _overlap(box, toast), (selector, box, toast)
    # Scrolled down the list, the toast stays in view inside the top bar, which the rows pass under as always.
    page.mouse.wheel(0, 400)
    page.wait_for_function("() => scrollY > 0")
    toast, bar = _box(page, ".toast"), _box(page, "#topbar")
    assert 0 <= bar["y"] <= toast["y"] and toast["y"] + toast["height"] <= bar["y"] + bar["height"]


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_chat_panel_opens_again_after_a_reload_with_its_draft(server, new_page, language):
    locale = LANGUAGES[language][0]
    appointment = PANEL_CHAT[language]
    page = new_page(server.url, viewport=LAPTOP, locale=locale)
    sign_in_as(page, "doctor1")
    page.locator(f'[data-id="chat-{appointment}"]').click()
    page.locator(BOX).wait_for()
    title = page.locator("#panel-title").inner_text()
    text = "Half a message, " + language
    type_and_wait_for_the_save(page, text, appointment=appointment, box=BOX)
    page.reload()
    page.locator(BOX).wait_for()
    page.wait_for_function(f"() => document.querySelector('{BOX}').value.length > 0")
    assert page.locator("#panel").is_visible() and page.locator("#panel-title").inner_text() == title
    assert page.locator(BOX).input_value() == text
    assert page.locator("body.has-embedded-panel").count() == 1  # beside the list, as before
    assert page.locator('#main-screen [data-id="title"]').is_visible()
    # Closed, it stays closed through the next reload.
    page.locator("#panel-close").click()
    page.locator("#panel").wait_for(state="hidden")
    page.reload()
    page.locator('#main-screen [data-id="title"]').wait_for()
    assert page.locator("#panel").is_hidden()


@pytest.mark.parametrize(("language", "width"), [("en", 1024), ("de", 1100)])
def test_the_floating_chat_panel_covers_no_row_nor_action_on_a_narrower_desktop(server, new_page, language, width):
    page = new_page(server.url, viewport={"width": width, "height": 800}, locale=LANGUAGES[language][0])
    sign_in_as(page, "doctor1")
    page.locator(f'[data-id="chat-{PANEL_CHAT[language]}"]').click()
    page.locator(BOX).wait_for()
    assert page.locator("body.has-floating-panel").count() == 1  # too narrow to sit beside the list
    panel = _box(page, "#panel")
    rows = '#main-screen [data-type="Row"][data-id^="appointment-"]'
    assert page.locator(rows).count() >= 3
    for selector in (rows, f"{rows} .link", f"{rows} button"):
        for part in page.locator(selector).all():
            box = part.bounding_box()
            assert box is None or not _overlap(box, panel), (selector, box, panel)
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")  # nothing pushed sideways
    page.locator("#panel-close").click()
    page.locator("#panel").wait_for(state="hidden")
    assert page.locator("body.has-floating-panel").count() == 0
