"""axe-core (bundled by axe-playwright-python, no network at test time) over every screen and layout: sign-in, the
lists of each role, Review and Approve with cards, the decline dialog, chat, the support threads, booking, the
week view, every administration screen, the patient's offers, on a desktop (1366×800) and a phone (390×844), in
English and German. No violation of any impact (moderate ones such as landmark-unique and
page-has-heading-one count too). The flows find screens by ids, never by words, so both languages take them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.web import confirm
from tests.e2e.web.conftest import axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}
LAYOUTS = {"desktop": DESKTOP, "phone": PHONE}
LANGUAGES = {"en": "en-GB", "de": "de-DE"}  # the browser's language, which the app follows
ADMIN_SECTIONS = (
    "locations",
    "hours",
    "fees",
    "insurance",
    "webhooks",
    "mail",
    "smart-apps",
    "sign-in",
    "sso",
    "audit",
)
# doctor1's open requests (one per layout: a draft stays with the appointment) and an appointment with chat.
REVIEWED = {"desktop": 1, "phone": 6}  # requests a doctor can suggest times for (3: the insurer data is invalid)
CHAT = 7
PENDING = 9  # patient1's request with offered alternatives


class Findings:
    """Violations per screen, reported together so one run names every problem."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.checked: list[str] = []

    def check(self, page: Any, screen: str) -> None:
        violations = axe_violations(page)  # once a load or a focus move has settled
        self.checked.append(screen)
        for v in violations:
            if v.get("impact"):  # any impact, moderate and minor too
                self.found.append(f"{screen}: {v['id']} ({v['impact']}) {v['help']} at {v['targets']}")


def signed_in_screens(username: str) -> Callable[[Any, Findings, str], None]:
    flows: dict[str, Callable[[Any, Findings, str], None]] = {
        "doctor1": doctor,
        "support1": support,
        "patient1": patient,
        "admin": admin,
    }
    return flows[username]


def doctor(page: Any, findings: Findings, layout: str) -> None:
    findings.check(page, "appointment list")
    page.locator('[data-id="filters"] .fold-toggle').click()
    page.locator('[data-id="f-status"]').wait_for()
    findings.check(page, "appointment list, the filter opened")
    page.locator('[data-id="filters"] .fold-toggle').click()
    page.locator('[data-id="calendar-feed"]').click()
    page.locator('[data-id="make"]').wait_for()
    findings.check(page, "calendar feed")
    page.locator('[data-id="back"]').click()
    page.locator('[data-id="week-view"]').click()
    page.locator('[data-type="Calendar"] [data-type="Day"]').first.wait_for()
    findings.check(page, "week view")
    page.locator('[data-id="week-list"]').click()
    page.locator(f'[data-id="review-{REVIEWED[layout]}"]').click()
    page.locator('[data-id="approve"]').wait_for()
    findings.check(page, "review and approve")
    page.locator('[data-id="another-alternative"]').click()
    page.locator('[data-id="alternative-1"]').wait_for()
    page.locator('[data-id="another-alternative"]').click()
    page.locator('[data-id="alternative-2"]').wait_for()
    findings.check(page, "review and approve with two cards")
    page.locator('[data-id="decline"]').click()
    page.get_by_role("dialog").wait_for()
    findings.check(page, "decline dialog")
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="hidden")
    page.locator('[data-id="cancel"]').click()
    findings.check(page, "a question asked before an action")
    assert confirm.answer(page)  # "Discard your changes?"
    page.locator(f'[data-id="chat-{CHAT}"]').wait_for()
    page.locator(f'[data-id="chat-{CHAT}"]').click()
    page.locator('[data-id="content"] textarea').wait_for()
    findings.check(page, f"chat ({'panel' if layout == 'desktop' else 'full screen'})")


def support(page: Any, findings: Findings, layout: str) -> None:
    findings.check(page, "support's list")
    if layout == "desktop":
        page.locator("#nav-messages").click()
    else:
        page.evaluate("location.hash = '#/profile/messages/threads'")
    page.locator('[data-screen="chat-threads"] [data-id="title"]').wait_for()
    findings.check(page, "support threads")


def patient(page: Any, findings: Findings, layout: str) -> None:
    findings.check(page, "patient's list")
    page.locator('[data-id="book"]').click()
    page.locator('[data-screen="booking"] [data-id^="time-"]').first.wait_for()
    findings.check(page, "booking")
    page.locator('[data-id^="time-"]').first.click()
    page.locator('[data-id="request"]').wait_for()
    findings.check(page, "booking with a time picked")
    page.evaluate(f"location.hash = '#/profile/appointments/{PENDING}/offers'")
    page.locator('[data-screen="appointment-offers"] [data-id="offers"]').wait_for()
    findings.check(page, "offers")
    page.locator('[data-id="accept~1"]').click()
    page.locator(confirm.OPEN).wait_for()
    findings.check(page, "accepting an offer, asked first")
    confirm.answer(page, yes=False)


def admin(page: Any, findings: Findings, layout: str) -> None:
    page.locator('[data-id="administration"]').click()
    page.locator('[data-screen="admin-users"]').wait_for()
    findings.check(page, "admin users")
    page.locator('[data-id="new-user"]').click()
    page.locator('[data-screen="admin-user-new"]').wait_for()
    findings.check(page, "admin new user")
    for section in ADMIN_SECTIONS:
        page.locator(f'[data-id="nav-{section}"]').click()
        page.locator(f'[data-id="nav-{section}"].is-highlighted').wait_for()
        findings.check(page, f"admin {section}")


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_sign_in_page_has_no_accessibility_violations(server, new_page, layout, language):
    page = new_page(server.url, viewport=LAYOUTS[layout], locale=LANGUAGES[language])
    page.goto("/")
    page.locator(f'html[lang="{language}"] #login-title').wait_for()
    findings = Findings()
    findings.check(page, "sign-in")
    page.locator('#login-form [type="submit"]').click()
    page.locator("#login-error").wait_for()
    findings.check(page, "sign-in with its error")
    assert findings.found == []


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1", "admin"])
def test_every_screen_of_a_role_has_no_accessibility_violations(server, new_page, username, layout, language):
    page = new_page(server.url, viewport=LAYOUTS[layout], locale=LANGUAGES[language])
    if language == "de":
        german_sign_in(page, username)
    else:
        sign_in(page, username)
    assert page.evaluate("document.documentElement.lang") == language
    findings = Findings()
    signed_in_screens(username)(page, findings, layout)
    assert findings.checked and findings.found == [], "\n".join(findings.found)


def test_the_check_reports_a_serious_violation_when_there_is_one(server, new_page):
    """The check itself can fail: a button without a name (axe's button-name, critical) is reported."""
    page = new_page(server.url, viewport=DESKTOP)
    page.goto("/")
    page.get_by_role("heading", name="Sign in").wait_for()
    page.evaluate("() => document.querySelector('#login-form').append(document.createElement('button'))")
    findings = Findings()
    findings.check(page, "sign-in with a nameless button")
    assert any("button-name" in f for f in findings.found), findings.found
