"""The administration screens in the browser, desktop and phone: create a doctor (landing on their page, where the
one-time link is), reset a password, change work hours and see the approved appointments they would leave outside,
filter the audit trail (docs/administration.md)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.web.conftest import axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def open_administration(page, language: str = "en") -> None:
    if language == "de":
        german_sign_in(page, "admin")
    else:
        sign_in(page, "admin")
    page.locator('[data-id="administration"]').click()
    page.locator("h1", has_text="Benutzer" if language == "de" else "Users").wait_for()


CREATED = {
    "en": ("Created Dr. Browser", "Deactivate", "One-time link to set a password", "One-time link: "),
    "de": ("Dr. Browser angelegt", "Deaktivieren", "Einmal-Link zum Setzen eines Passworts", "Einmal-Link: "),
}


@pytest.mark.parametrize(("viewport", "locale"), [(None, "en-GB"), (PHONE, "de-DE")], ids=["desktop-en", "phone-de"])
def test_create_user_lands_on_the_new_users_page_with_its_one_time_link(server, new_page, viewport, locale):
    language = locale[:2]
    created, deactivate, link, link_shown = CREATED[language]
    page = new_page(server.url, viewport=viewport, locale=locale)
    open_administration(page, language)
    page.locator('[data-id="new-user"]').click()
    page.locator('[data-id="create"]').wait_for()
    username = f"drbrowser{language}"
    page.locator('[data-name="username"]').fill(username)
    page.locator('[data-name="display_name"]').fill("Dr. Browser")
    page.locator('[data-name="specialty"]').fill("Neurology")
    page.locator('[data-id="create"]').click()
    page.locator("h1", has_text="Dr. Browser").wait_for()  # the new user's page, not an empty form
    page.locator(".toast", has_text=created).wait_for()
    assert page.locator('[data-name="username"]').count() == 0
    assert page.locator('[data-id="toggle-active"]').inner_text().strip() == deactivate
    page.locator('[data-id="password-link"]', has_text=link).click()
    page.locator('[data-id="new-password"]', has_text=link_shown).wait_for()
    assert page.locator('[data-id="copy-link"]').is_visible()
    assert axe_violations(page) == []


def test_work_hours_that_would_strand_an_appointment_are_listed_first(server, new_page):
    page = new_page(server.url)
    page.on("dialog", lambda dialog: dialog.accept())
    open_administration(page)
    page.locator('[data-id="nav-hours"]').click()
    page.locator("h1", has_text="Work hours").wait_for()
    # Doctor 1 at the first location: every line dropped but one Sunday morning.
    lines = page.locator('[data-name^="weekday~"]')
    for i in range(lines.count()):
        lines.nth(i).select_option("")
    page.locator('[data-name="weekday~1"]').select_option("6")
    page.locator('[data-name="opens~1"]').fill("06:00")
    page.locator('[data-name="closes~1"]').fill("07:00")
    page.locator('[data-id="save-hours"]').click()
    conflicts = page.locator('[data-id="conflicts"]')
    conflicts.wait_for()
    assert page.locator('[data-id^="conflict-"]').count() >= 1
    assert "Nothing was changed" in (page.locator('[data-id="conflicts-text"]').text_content() or "")
    page.locator('[data-id="confirm-change"]').click()
    page.locator('[data-id="saved"]', has_text="Weekly hours saved").wait_for()
    assert conflicts.is_hidden()


def test_the_audit_trail_is_filtered_on_a_phone(server, new_page):
    page = new_page(server.url, viewport=PHONE)
    open_administration(page)
    page.locator('[data-id="nav-audit"]').click()
    page.locator("h1", has_text="Audit trail").wait_for()
    assert page.locator('[data-type="Row"][data-id^="audit-"]').count() >= 1
    page.locator('[data-name="action"]').fill("login")
    page.locator('[data-id="apply-filters"]').click()
    # The filtered page replaced the first: every entry shown is of that action.
    page.wait_for_function(
        """() => {
            const cells = [...document.querySelectorAll('[data-id^="audit-action-"]')];
            return location.hash.includes('action=login') && cells.length > 0
                && cells.every((c) => c.textContent.endsWith('login'));
        }"""
    )
    assert page.locator('[data-id="export-csv"] button').is_visible()


def test_a_doctors_account_has_a_zone_list_a_destructive_look_and_a_link_to_copy(server, new_page):
    page = new_page(server.url)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    asked: list[str] = []

    def dismiss(dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    open_administration(page)
    row = page.locator('[data-type="Row"][data-id^="user-"]', has_text="Dr. Anna Berger")
    row.locator('[data-id^="open-user-"]').click()
    page.locator("h1", has_text="Dr. Anna Berger").wait_for()
    # The time zone is chosen from the IANA list, searchable as one types.
    zone = page.locator('[data-name="timezone"]')
    assert zone.get_attribute("list")
    options = page.locator(f"datalist#{zone.get_attribute('list')} option")
    assert options.count() > 300
    assert page.locator(f'datalist#{zone.get_attribute("list")} option[value="Europe/Berlin"]').count() == 1
    # "Deactivate" looks destructive, unlike "Save" beside it, and asks first: dismissed, nothing happens.
    deactivate = page.locator('[data-id="toggle-active"]')
    assert deactivate.get_attribute("data-tone") == "danger"
    colour = "e => getComputedStyle(e).color + getComputedStyle(e).borderColor + getComputedStyle(e).backgroundColor"
    assert deactivate.evaluate(colour) != page.locator('[data-id="save"]').evaluate(colour)
    deactivate.click()
    assert asked and "signed out everywhere" in asked[0]
    assert "Active" in (page.locator('[data-id="user-status"]').text_content() or "")
    # The one-time link: its expiry in the clinic's zone, and a button that copies it.
    page.locator('[data-id="password-link"]').click()
    notice = page.locator('[data-id="new-password"]')
    notice.wait_for()
    text = notice.text_content() or ""
    link = re.search(r"(http\S+/#/set-password/\S+)", text)
    assert link and re.search(r"until \w{3} \d\d \w{3} \d{4}, \d\d:\d\d CES?T\.", text)
    page.locator('[data-id="copy-link"]').click()
    page.locator('[data-id="copy-link"]', has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == link.group(1)
