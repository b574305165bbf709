"""Screenshots of the web app for the README: ``python -m tests.e2e.web.screenshots [out_dir [name …]]``.

Starts a live server with the demo clinic, drives Debian's chromium through the main screens on a desktop and a
phone viewport, and writes PNG files (default ``docs/screenshots``).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.web.conftest import DESKTOP, MOBILE
from tests.support.browser import LAUNCH_ARGS, chromium_executable
from tests.support.live import LiveServer, clock_of
from tests.support.moments import MONDAY_MORNING

Step = Callable[[Any], None]


CHAT = 7  # doctor1's approved appointment with patient4


def conversation(base_url: str) -> None:
    """A short exchange between support and the doctor, with an image, for the chat shots."""
    import httpx

    from tests.e2e.web.test_chat import png

    def post(username: str, text: str, file: tuple[str, bytes, str] | None = None) -> None:
        with httpx.Client(base_url=base_url, timeout=10) as http:
            token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
            http.post(
                "/profile/messages/send-message",
                data={"content": text, "appointment-id": str(CHAT)},
                files={"file": file} if file else None,
                headers={"Authorization": f"Bearer {token}"},
            ).raise_for_status()

    post("support1", "Hi Dr. Berger, Mr. Brown asked whether he should bring his previous X-ray.")
    post("doctor1", "Yes please, and the discharge letter if he has it.")
    post("support1", "He sent this picture of the letter already:", ("letter.png", png(240, 120), "image/png"))
    post("doctor1", "Perfect, thank you <3 — see you on Monday.")


def first_chat(page: Any) -> None:
    page.locator(f'[data-id="chat-{CHAT}"]').click()
    page.locator('[data-id="content"]').first.wait_for()
    page.wait_for_timeout(800)


def threads(page: Any) -> None:
    page.locator("#nav-messages").click()
    page.locator('[data-ref^="open-"]').first.wait_for()
    page.wait_for_timeout(300)


def first_review(page: Any, appointment: int = 6) -> None:
    """Review and Approve with one suggested alternative: red highlights on what changed, fees once complete."""
    from tests.e2e.web.test_review import weekday_ahead

    page.locator(f'[data-id="review-{appointment}"]').click()
    page.locator('[data-id="approve"]').wait_for()
    page.locator('[data-id="another-alternative"]').click()
    date = page.locator('[data-name="date~1"]')
    date.wait_for()
    year, month, day = weekday_ahead(12).split("-")
    german = page.evaluate("document.documentElement.lang") == "de"
    date.fill(f"{day}.{month}.{year}" if german else f"{day}/{month}/{year}")  # the page's date format
    date.dispatch_event("change")
    page.locator('[data-id="date~1"].is-highlighted').wait_for()
    when = page.locator('[data-name="time~1"]')
    when.fill("10:00")
    when.dispatch_event("change")
    page.locator('[data-id="doctor-fee~1"]:not([hidden])').wait_for()
    page.wait_for_timeout(300)


def another_review(page: Any) -> None:
    first_review(page, 1)


def admin_fees(page: Any) -> None:
    """The administration's fee screen: the rules in force, the form, the history."""
    page.locator('[data-id="administration"]').click()
    page.locator('[data-id="nav-fees"]').click()
    page.locator('[data-id="add-fee"]').wait_for()
    page.wait_for_timeout(300)


def admin_audit(page: Any) -> None:
    """The audit trail: each action in words beside its code."""
    page.locator('[data-id="administration"]').click()
    page.locator('[data-id="nav-audit"]').click()
    page.locator('[data-id^="audit-action-"]').first.wait_for()
    page.wait_for_timeout(300)


def security(page: Any) -> None:
    """The security page: this session, the authenticator app, passkeys, recovery codes, connected apps."""
    page.locator("#nav-security").click()
    page.locator('[data-screen="security"] [data-id="sessions"]').wait_for()
    page.wait_for_timeout(300)


def offers(page: Any) -> None:
    """The patient's appointment with the alternatives the doctor offered, each with its fees."""
    page.locator('[data-id="offers-9"]').click()  # doctor1's offer to patient1 (seeded)
    page.locator('[data-type="Card"][data-ref^="offer-"]').first.wait_for()
    page.wait_for_timeout(300)


def week(page: Any) -> None:
    """The doctor's week view: appointments, requests, offers and free times in a grid."""
    page.locator('[data-id="week-view"]').click()
    page.locator('[data-type="Calendar"] [data-type="Day"]').first.wait_for()
    page.wait_for_timeout(300)


# name, viewport, user (None: the sign-in page), step, the browser's language.
ONLY = set(sys.argv[2:])

SHOTS: list[tuple[str, dict[str, int], str | None, Step | None, str]] = [
    ("login-desktop", DESKTOP, None, None, "en-GB"),
    ("list-desktop", DESKTOP, "doctor1", None, "en-GB"),
    ("review-desktop", DESKTOP, "doctor1", first_review, "en-GB"),
    ("chat-desktop", {"width": 1440, "height": 900}, "doctor1", first_chat, "en-GB"),
    ("list-mobile", MOBILE, "doctor1", None, "en-GB"),
    ("chat-mobile", MOBILE, "doctor1", first_chat, "en-GB"),
    ("review-mobile", MOBILE, "doctor1", first_review, "en-GB"),
    ("threads-desktop", DESKTOP, "support1", threads, "en-GB"),
    ("week-desktop", DESKTOP, "doctor1", week, "en-GB"),
    ("week-mobile", MOBILE, "doctor1", week, "en-GB"),
    ("offers-mobile", MOBILE, "patient1", offers, "en-GB"),
    ("security-desktop", DESKTOP, "admin", security, "en-GB"),
    # The same app in a German browser.
    ("login-desktop-de", DESKTOP, None, None, "de-DE"),
    ("list-desktop-de", DESKTOP, "doctor1", None, "de-DE"),
    ("review-desktop-de", DESKTOP, "doctor1", another_review, "de-DE"),
    ("chat-mobile-de", MOBILE, "doctor1", first_chat, "de-DE"),
    ("list-mobile-de", MOBILE, "doctor1", None, "de-DE"),
    ("admin-fees-desktop-de", DESKTOP, "admin", admin_fees, "de-DE"),
    ("admin-audit-desktop-de", DESKTOP, "admin", admin_audit, "de-DE"),
]


def enter(page: Any, user: str | None) -> None:
    """The sign-in page (``user`` None) or the user's list, in whichever language the browser speaks."""
    page.goto("/")
    page.locator("#login-title").wait_for()
    page.wait_for_function("() => document.documentElement.lang === navigator.language.slice(0, 2)")
    if user is None:
        return
    page.locator("#login-username").fill(user)
    page.locator("#login-password").fill("demo")
    page.locator("#login-submit").click()
    page.locator('[data-id="title"]').wait_for()


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = LiveServer(Path(tmp), at=MONDAY_MORNING)  # a working Monday, whatever day it is taken on
        server.prepare()
        server.start()
        conversation(server.url)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium_executable(headless_shell=False), headless=True, args=LAUNCH_ARGS
                )
                for name, viewport, user, step, locale in SHOTS:
                    if ONLY and name not in ONLY:
                        continue
                    context = browser.new_context(
                        base_url=server.url, viewport=viewport, device_scale_factor=1, locale=locale
                    )
                    context.clock.install(time=clock_of(server.url).now())
                    page = context.new_page()
                    enter(page, user)
                    if step is not None:
                        try:
                            step(page)
                        except Exception as error:  # a screen that has not landed yet: skip its shot
                            print(f"skipped {name}: {error}", file=sys.stderr)
                            context.close()
                            continue
                    page.screenshot(path=str(out / f"{name}.png"), full_page=False)
                    print(f"wrote {out / f'{name}.png'}")
                    context.close()
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots"))
