"""Review and Approve in words, in the browser, in English (en-GB) and German (docs/review-and-approve.md#wording):
a service the policy excludes named by its name ("Teledermatology is not covered by the patient's policy."), cards
titled "Alternative 1" without the feature's name, and times on the 24-hour clock — a text field, not the browser's
<input type="time">, which shows "10:00 AM" in chromium whatever the page's language."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.web.conftest import DESKTOP, MOBILE, axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in
from tests.e2e.web.test_review import open_review, weekday_ahead

pytestmark = pytest.mark.browser

PLAIN_REQUEST = 1  # patient1, Berlin
TELEDERMATOLOGY = 5  # patient5, whose policy excludes teledermatology

WORDS = {
    "en": ("Teledermatology is not covered by the patient's policy.", "Alternative 1"),
    "de": ("Teledermatologie ist durch die Versicherung des Patienten nicht abgedeckt.", "Alternative 1"),
}
CASES = pytest.mark.parametrize(
    ("locale", "viewport"), [("en-GB", DESKTOP), ("de-DE", MOBILE)], ids=["en-GB-desktop", "de-phone"]
)
# An afternoon time typed without the colon, a different one per case: both cases edit the same draft (the module's
# server), so each proves that its own typing was read and kept.
TYPED = {"en": ("1430", "14:30"), "de": ("1515", "15:15")}


def _sign_in(page, locale: str, username: str) -> None:
    if locale.startswith("de"):
        german_sign_in(page, username)
    else:
        sign_in(page, username)


@CASES
def test_an_excluded_service_is_named_by_its_name_and_cards_have_plain_titles(server, new_page, locale, viewport):
    excluded, title = WORDS[locale[:2]]
    page = new_page(server.url, viewport=viewport, locale=locale)
    _sign_in(page, locale, "doctor1")
    open_review(page, TELEDERMATOLOGY)
    page.locator('[data-id="coverage-error"]', has_text=excluded).wait_for()
    assert "'teledermatology'" not in page.locator("#main-screen").inner_text()
    page.locator('[data-id="cancel"]').click()
    open_review(page, PLAIN_REQUEST)
    if page.locator('[data-id="alternative-1"]').count() == 0:
        page.locator('[data-id="another-alternative"]').click()
    card = page.locator('[data-id="alternative-1"]')
    card.wait_for()
    heading = card.get_by_role("heading").first.inner_text().strip()
    assert heading == title and "Suggested Scheduling" not in page.locator("#main-screen").inner_text()


@CASES
def test_times_are_on_the_24_hour_clock_and_typed_times_are_read_as_such(server, new_page, locale, viewport):
    page = new_page(server.url, viewport=viewport, locale=locale)
    _sign_in(page, locale, "doctor1")
    open_review(page, PLAIN_REQUEST)
    if page.locator('[data-id="alternative-1"]').count() == 0:
        page.locator('[data-id="another-alternative"]').click()
    card = page.locator('[data-id="alternative-1"]')
    time = card.locator('[data-name="time~1"]')
    time.wait_for()
    assert time.evaluate("e => e.type") == "text"  # not the browser's clock, which follows the browser's locale
    assert time.get_attribute("placeholder") == "HH:MM"
    typed, read = TYPED[locale[:2]]
    day = card.locator('[data-name="date~1"]')
    day.fill(weekday_ahead(12))
    day.dispatch_event("change")
    time.fill(typed)  # typed without the colon, as on a phone's number pad
    time.dispatch_event("change")
    # The server's answer writes the time back as it read it; the card is then complete and shows its fee.
    expect(time).to_have_value(read)
    page.locator('[data-id="doctor-fee~1"]:not([hidden])').wait_for()
    page.reload()  # what the server kept is what comes back
    shown = page.locator('[data-id="alternative-1"] [data-name="time~1"]')
    shown.wait_for()
    assert shown.input_value() == read
    assert "PM" not in page.locator("#main-screen").inner_text()
    assert axe_violations(page) == []
