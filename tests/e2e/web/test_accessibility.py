"""axe-core (bundled by axe-playwright-python, no network at test time) over every screen and layout: sign-in, the
lists of each role, Review and Approve with cards, the decline dialog, chat, the support threads, booking and the
administration screens, the patient's offers, on a desktop (1366×800) and a phone (390×844). No violation of any
impact (issue 30: moderate ones such as landmark-unique and page-has-heading-one count too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.e2e.web.conftest import sign_in

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}
LAYOUTS = {"desktop": DESKTOP, "phone": PHONE}
# doctor1's open requests (one per layout: a draft stays with the appointment) and an appointment with chat.
REVIEWED = {"desktop": 1, "phone": 6}  # requests a doctor can suggest times for (3: the insurer data is invalid)
CHAT = 7
AXE = Axe()
PENDING = 9  # patient1's request with offered alternatives


class Findings:
    """Violations per screen, reported together so one run names every problem."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.checked: list[str] = []

    def check(self, page: Any, screen: str) -> None:
        page.wait_for_timeout(150)  # let a patch or a focus move settle
        violations = AXE.run(page).response["violations"]
        self.checked.append(screen)
        for v in violations:
            if v.get("impact"):  # any impact, moderate and minor too (issue 30)
                targets = [" ".join(map(str, n.get("target", []))) for n in v.get("nodes", [])][:4]
                self.found.append(f"{screen}: {v['id']} ({v['impact']}) {v['help']} at {targets}")


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
    page.locator('[data-id="calendar-feed"]').click()
    page.locator('[data-id="make"]').wait_for()
    findings.check(page, "calendar feed")
    page.locator('[data-id="back"]').click()
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
    page.once("dialog", lambda dialog: dialog.accept())  # "Discard your changes?"
    page.locator('[data-id="cancel"]').click()
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
    page.locator('[data-id="title"]').filter(has_text="chats").wait_for()
    findings.check(page, "support threads")


def patient(page: Any, findings: Findings, layout: str) -> None:
    findings.check(page, "patient's list")
    page.locator('[data-id="book"]').click()
    page.get_by_role("heading", name="Book an appointment").wait_for()
    page.locator('[data-id^="time-"]').first.wait_for()
    findings.check(page, "booking")
    page.locator('[data-id^="time-"]').first.click()
    page.locator('[data-id="request"]').wait_for()
    findings.check(page, "booking with a time picked")
    page.evaluate(f"location.hash = '#/profile/appointments/{PENDING}/offers'")
    page.get_by_role("heading", name="Your appointment").wait_for()
    findings.check(page, "offers")


def admin(page: Any, findings: Findings, layout: str) -> None:
    page.locator('[data-id="administration"]').click()
    page.locator("h1", has_text="Users").wait_for()
    findings.check(page, "admin users")
    page.locator('[data-id="new-user"]').click()
    page.locator("h1", has_text="New user").wait_for()
    findings.check(page, "admin new user")
    for section, heading in (("hours", "hours"), ("locations", "Locations"), ("audit", "Audit")):
        page.locator(f'[data-id="nav-{section}"]').click()
        page.locator("h1", has_text=heading).wait_for()
        findings.check(page, f"admin {section}")


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_sign_in_page_has_no_accessibility_violations(server, new_page, layout):
    page = new_page(server.url, viewport=LAYOUTS[layout])
    page.goto("/")
    page.get_by_role("heading", name="Sign in").wait_for()
    findings = Findings()
    findings.check(page, "sign-in")
    page.get_by_role("button", name="Sign in").click()
    page.locator("#login-error").wait_for()
    findings.check(page, "sign-in with its error")
    assert findings.found == []


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1", "admin"])
def test_every_screen_of_a_role_has_no_accessibility_violations(server, new_page, username, layout):
    page = new_page(server.url, viewport=LAYOUTS[layout])
    sign_in(page, username)
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
