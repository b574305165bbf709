"""The "Confirm it is you" prompt in chromium (docs/accounts.md#recent-authentication): a change of how an account
signs in, made from a session whose sign-in is no longer recent, is answered 403 REAUTHENTICATION_REQUIRED; the web
app asks for the password in its own dialog, says so when it is wrong, and once it is right sends the change again,
which then happens. Going back sends nothing. English and German, axe clean with the dialog open."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import axe_violations

pytestmark = pytest.mark.browser

# Each case its own doctor: one sets up an authenticator app, which changes what the next sign-in asks.
CASES = {
    "en": ("en-GB", "doctor2", "Confirm it is you"),
    "de": ("de-DE", "doctor3", "Bestätigen Sie, dass Sie es sind"),
}


def forget_the_sign_in(server: Any, username: str) -> None:
    """The user's sessions have no recent proof of who they are (as a sign-in long ago): the server's database."""
    with sqlite3.connect(server.data_dir / "doctordesk.db") as db:
        db.execute(
            "UPDATE access_tokens SET authenticated_at = NULL, second_factor = 0"
            " WHERE user_id = (SELECT id FROM users WHERE username = ?)",
            (username,),
        )


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_change_from_an_old_sign_in_asks_for_the_password_then_happens(server, new_page, language):
    locale, username, title = CASES[language]
    page = new_page(server.url, locale=locale)
    sign_in_as(page, username)
    page.locator("#nav-security").click()
    page.locator('[data-screen="security"] [data-id="sessions"]').wait_for()
    forget_the_sign_in(server, username)

    dialog = page.locator("dialog#reauth")
    page.locator('[data-id="totp-on"]').click()
    dialog.wait_for(state="visible")
    assert dialog.locator(".modal-title").inner_text() == title
    assert axe_violations(page, while_busy=True) == []  # the change waits behind the dialog
    dialog.locator("button[type=button]").click()  # back: nothing is sent again
    dialog.wait_for(state="hidden")
    assert page.locator('[data-id="totp-qr"] img').count() == 0

    page.locator('[data-id="totp-on"]').click()
    dialog.wait_for(state="visible")
    dialog.locator("input[type=password]").fill("not-the-password")
    dialog.locator("button[type=submit]").click()
    error = dialog.locator(".form-error")
    error.wait_for(state="visible")
    assert error.inner_text().strip() and dialog.is_visible()  # it says so, and asks again
    dialog.locator("input[type=password]").fill("demo")
    dialog.locator("button[type=submit]").click()
    dialog.wait_for(state="hidden")
    page.locator('[data-id="totp-qr"] img').wait_for()  # the change was sent again and made
