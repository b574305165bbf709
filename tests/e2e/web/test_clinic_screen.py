"""The Clinic screen in the browser (docs/administration.md#clinic-settings): reached from the administration's
navigation, its reminder settings saved, a refused value said beside its field; desktop in English and phone in
German, axe clean."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.web.conftest import DESKTOP, MOBILE, axe_violations
from tests.e2e.web.test_admin_screens import open_administration

pytestmark = pytest.mark.browser

WORDS = {
    "en": ("Clinic", "Reminders", "Saved.", "Whole hours from 1 to 336"),
    "de": ("Praxis", "Erinnerungen", "Gespeichert.", "Ganze Stunden von 1 bis 336"),
}
# Each run saves hours of its own (typed, then as stored), so the second run changes what the first saved.
HOURS = {"en": ("3, 48", "48,3", [48, 3]), "de": ("4, 36", "36,4", [36, 4])}


@pytest.mark.parametrize(
    ("viewport", "locale"), [(DESKTOP, "en-GB"), (MOBILE, "de-DE")], ids=["desktop-en", "phone-de"]
)
def test_the_clinic_screen_saves_the_reminder_settings(server, new_page, viewport, locale):
    language = locale[:2]
    title, section, saved, refused = WORDS[language]
    page = new_page(server.url, viewport=viewport, locale=locale)
    open_administration(page, language)
    page.locator('[data-id="nav-clinic"]').click()
    page.locator("h1", has_text=title).wait_for()
    page.get_by_text(section, exact=True).first.wait_for()
    assert page.locator('[data-name="reminder_hours"]').input_value() in ("24,2", "48,3", "36,4")
    typed, shown, stored = HOURS[language]
    assert axe_violations(page) == []
    page.locator('[data-name="reminder_hours"]').fill("0")
    page.locator('[data-id="save-clinic"]').click()
    page.get_by_text(refused).first.wait_for()  # beside the field, the form as typed
    assert page.locator('[data-name="reminder_hours"]').input_value() == "0"
    page.locator('[data-name="reminder_hours"]').fill(typed)
    page.locator('[data-id="save-clinic"]').click()
    page.get_by_text(saved).first.wait_for()
    assert page.locator('[data-name="reminder_hours"]').input_value() == shown
    assert axe_violations(page) == []
    with httpx.Client(base_url=server.url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        got = http.get("/admin/clinic", headers={"Authorization": f"Bearer {token}"}).json()
    assert got["reminder_hours"] == stored
