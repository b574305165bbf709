"""The Notifications section of the security page in chromium (docs/notifications.md#staff-mail), in English and
German: a doctor gives an address and ticks a kind, saves, and sees it saved and kept after opening the page again;
a wrong address is shown at its field; axe finds nothing on the section."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web.conftest import axe_violations
from tests.e2e.web.test_security_page import open_security, sign_in_as

pytestmark = pytest.mark.browser

SAVED = {"en": "Your notifications were saved.", "de": "Ihre Benachrichtigungen wurden gespeichert."}
NEW_REQUEST = {"en": "Mail me a new appointment request for me", "de": "Mail bei einer neuen Terminanfrage an mich"}


def _section(page: Any) -> Any:
    return page.locator('[data-screen="security"] [data-id="notifications"]')


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_doctor_saves_their_mail_in_their_language_and_axe_finds_nothing(server, new_page, language):
    page = new_page(server.url, locale={"en": "en-GB", "de": "de-DE"}[language])
    username = {"en": "doctor2", "de": "doctor3"}[language]  # one module's server: each language its own doctor
    sign_in_as(page, username, language)
    open_security(page)
    section = _section(page)
    section.wait_for()
    assert page.evaluate("document.documentElement.lang") == language
    violations = [f"{v['id']} ({v['impact']}) {v['help']} at {v['targets']}" for v in axe_violations(page)]
    assert violations == []
    address = section.locator('[data-name="email"]')
    address.fill("not an address")
    section.locator('[data-id="mail-save"]').click()
    section.locator('[data-id="mail-email"] .msg-error').wait_for()
    assert address.get_attribute("aria-invalid") == "true"
    address.fill(f"{username}@Clinic.Example")
    section.get_by_label(NEW_REQUEST[language]).check()
    section.locator('[data-id="mail-save"]').click()
    page.get_by_text(SAVED[language]).wait_for()
    page.reload()
    _section(page).wait_for()
    assert _section(page).locator('[data-name="email"]').input_value() == f"{username}@clinic.example"
    assert _section(page).get_by_label(NEW_REQUEST[language]).is_checked()
