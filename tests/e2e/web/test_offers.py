"""The patient's view in the browser: the offered alternatives of a pending request, accepting one."""

from __future__ import annotations

import re

import pytest

from tests.e2e.web import confirm
from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import MOBILE, sign_in

pytestmark = pytest.mark.browser

PENDING = 9  # doctor1 offered alternatives to patient1 (seeded)
AT_RISK = 10  # and to patient4, times their insurance may not cover


def test_a_patient_sees_the_offered_times_with_fees_and_accepts_one(server, new_page):
    page = new_page(server.url)
    sign_in(page, "patient1")
    assert page.locator(f'[data-id="status-{PENDING}"]').text_content() == "Choose a time"
    assert page.locator(f'[data-id="review-{PENDING}"]').count() == 0  # patients do not decide
    page.locator(f'[data-id="offers-{PENDING}"]').click()
    page.get_by_role("heading", name="Your appointment").wait_for()
    cards = page.locator('[data-type="Card"][data-ref^="offer-"]')
    assert cards.count() >= 1
    first = cards.first
    fee = first.locator('[data-ref^="offer-doctor-fee~"]')
    # The label and the amount stay apart, in the text and on screen ("Doctor fee€60.00").
    assert (fee.text_content() or "").startswith("Doctor fee €")
    label, amount = fee.locator(".highlight-label").bounding_box(), fee.locator(".highlight-value").bounding_box()
    assert label and amount and (amount["x"] >= label["x"] + label["width"] + 4 or amount["y"] > label["y"])
    time = first.locator('[data-ref^="offer-time~"] .regular-value').inner_text()
    first.get_by_role("button", name="Accept this time").click()
    # Asked first, naming the time being accepted; the dialog's own button accepts.
    dialog = page.get_by_role("dialog", name=re.compile(re.escape(f"Accept {time} with Dr. ")))
    assert dialog.get_by_role("button", name="Accept this time").is_visible()
    assert dialog.get_by_role("button", name="Back").is_visible()
    assert confirm.answer(page).startswith(f"Accept {time} with")
    page.locator('[data-id="status"][data-value="Approved"]').or_(
        page.locator(f'[data-id="status-{PENDING}"][data-value="Approved"]')
    ).first.wait_for()


def test_on_a_german_phone_accepting_is_asked_first_and_back_changes_nothing(server, new_page):
    page = new_page(server.url, viewport=MOBILE, locale="de-DE")
    sign_in_as(page, "patient4")
    page.evaluate(f"location.hash = '#/profile/appointments/{AT_RISK}/offers'")
    page.get_by_role("heading", name="Ihr Termin").wait_for()
    first = page.locator('[data-type="Card"][data-ref^="offer-"]').first
    time = first.locator('[data-ref^="offer-time~"] .regular-value').inner_text()
    box = first.locator('input[type="checkbox"]')  # "may not be covered": acknowledged where asked
    if box.count():
        box.check()
    accept = first.get_by_role("button", name="Diesen Termin annehmen")
    accept.click()
    question = confirm.answer(page, yes=False)  # "Zurück"
    assert question.startswith(f"{time} bei Dr. ") and "annehmen?" in question
    assert accept.evaluate("b => document.activeElement === b")  # focus back on the control
    status = page.locator('[data-id="status"]').get_attribute("data-value")
    assert status != "Zugesagt"  # nothing was sent
    accept.click()
    page.get_by_role("dialog").get_by_role("button", name="Diesen Termin annehmen").click()
    page.locator('[data-id="status"][data-value="Zugesagt"]').or_(
        page.locator(f'[data-id="status-{AT_RISK}"][data-value="Zugesagt"]')
    ).first.wait_for()
