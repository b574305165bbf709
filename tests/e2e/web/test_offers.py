"""The patient's view in the browser: the offered alternatives of a pending request, accepting one."""

from __future__ import annotations

import pytest

from tests.e2e.web.conftest import sign_in

pytestmark = pytest.mark.browser

PENDING = 9  # doctor1 offered alternatives to patient1 (seeded)


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
    # The label and the amount stay apart, in the text and on screen (issue 30: "Doctor fee€60.00").
    assert (fee.text_content() or "").startswith("Doctor fee €")
    label, amount = fee.locator(".highlight-label").bounding_box(), fee.locator(".highlight-value").bounding_box()
    assert label and amount and (amount["x"] >= label["x"] + label["width"] + 4 or amount["y"] > label["y"])
    first.get_by_role("button", name="Accept this time").click()
    page.locator('[data-id="status"][data-value="Approved"]').or_(
        page.locator(f'[data-id="status-{PENDING}"][data-value="Approved"]')
    ).first.wait_for()
