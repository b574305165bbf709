"""The whole loop in two browsers, patient and doctor, without a reload: the patient books a free time, the doctor's
list shows the request live, the doctor suggests another time, the patient accepts it, and the doctor is told
(docs/booking.md)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.web import confirm
from tests.e2e.web.conftest import MOBILE, sign_in
from tests.e2e.web.test_language import german_sign_in
from tests.e2e.web.test_review import fill_card, weekday_ahead

pytestmark = pytest.mark.browser

ROWS = '[data-id="needs-decision"] [data-type="Row"]'


def row_ids(page) -> set[str]:
    return set(page.eval_on_selector_all(ROWS, "rows => rows.map(r => r.dataset.id)"))


def test_patient_books_doctor_suggests_patient_accepts_doctor_is_told(server, new_page):
    doctor = new_page(server.url)
    sign_in(doctor, "doctor1")
    doctor.locator('#connection[data-status="live"]').wait_for()
    before = row_ids(doctor)

    patient = new_page(server.url)
    sign_in(patient, "patient1")
    patient.locator('[data-id="book"]').click()
    patient.get_by_role("heading", name="Book an appointment").wait_for()
    patient.locator('[data-id="next-week"]').click()
    patient.locator('[data-id="previous-week"]:not([disabled])').wait_for()
    first = patient.locator('[data-id^="time-"]').first
    first.wait_for()
    first.click()
    patient.locator('[data-id="request"]').wait_for()
    patient.locator('[data-name="note"]').fill("Recurring headaches")
    patient.locator('[data-id="request"]').click()
    patient.locator(".toast", has_text="Request sent for").wait_for()

    # The doctor's list shows the request without a reload.
    doctor.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length > n", arg=[ROWS, len(before)], timeout=10_000
    )
    (new_row,) = row_ids(doctor) - before
    appointment = int(new_row.removeprefix("appointment-"))
    assert (doctor.locator(f'[data-id="patient-{appointment}"]').text_content() or "").endswith("Maria Schmidt")

    doctor.locator(f'[data-id="review-{appointment}"]').click()
    doctor.locator('[data-id="approve"]').wait_for()
    assert doctor.locator('[data-id="request-note"]').text_content().endswith("Recurring headaches")
    doctor.locator('[data-id="another-alternative"]').click()
    doctor.locator('[data-id="alternative-1"]').wait_for()
    fill_card(doctor, 1, weekday_ahead(12), "10:00")
    doctor.locator('[data-id="approve"]:not([disabled])').click()
    doctor.locator('[data-id="needs-decision"]').wait_for()

    # The patient's list shows the offer live; they accept it.
    patient.locator(f'[data-id="offers-{appointment}"]').click()
    patient.get_by_role("heading", name="Your appointment").wait_for()
    patient.get_by_role("button", name="Accept this time").first.click()
    confirm.answer(patient)
    patient.locator(f'[data-id="status-{appointment}"]').wait_for()

    # The doctor is told, on the list that stayed open.
    notice = doctor.locator('[data-id^="notice-"]', has_text="accepted the time")
    notice.wait_for(timeout=10_000)
    assert re.search(r"Maria Schmidt accepted the time", notice.text_content() or "")
    notice.get_by_role("button", name="Dismiss").click()
    notice.wait_for(state="detached")


def test_on_a_phone_picking_a_time_moves_focus_and_view_to_the_request_and_warns_about_coverage(server, new_page):
    """After picking a time the page no longer stays at the top with focus on its heading:
    "Your request" is focused and in view with its button, and the next Tab reaches the note. Defect 13: patient2's
    policy has expired, and the request says so before it is sent."""
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "patient2")
    page.locator('[data-id="book"]').click()
    page.get_by_role("heading", name="Book an appointment").wait_for()
    page.locator('[data-id="next-week"]').click()
    page.locator('[data-id="previous-week"]:not([disabled])').wait_for()
    slot = page.locator('[data-id^="time-"]').first
    slot.wait_for()
    box = slot.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= MOBILE["width"]
    slot.click()
    page.locator('[data-id="request"]').wait_for()
    page.wait_for_function("() => document.activeElement && document.activeElement.closest('[data-id=confirm]')")
    assert page.evaluate("document.activeElement.textContent") == "Your request"
    top = page.locator('[data-id="confirm"]').evaluate("e => e.getBoundingClientRect().top")
    bottom = page.locator('[data-id="request"]').evaluate("e => e.getBoundingClientRect().bottom")
    assert 0 <= top and bottom <= MOBILE["height"], (top, bottom)  # the step and its button in view
    assert page.evaluate("scrollY") > 0
    warning = page.locator('[data-id="coverage-warning"]')
    assert warning.is_visible() and "does not cover this date" in (warning.text_content() or "")
    # The doctor could not approve it, so it cannot be requested; the page says what the patient can do.
    assert page.locator('[data-id="request"]').is_disabled()
    assert "contact support" in (page.locator('[data-id="coverage-period"]').text_content() or "")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.name") == "note"


def test_in_german_a_time_the_expired_policy_does_not_cover_cannot_be_requested(server, new_page):
    """Patient2's policy has expired; the warning says why and what to do, in German, and "Termin
    anfragen" stays off."""
    page = new_page(server.url, locale="de-DE")
    german_sign_in(page, "patient2")
    page.locator('[data-id="book"]').click()
    page.locator('[data-id="next-week"]').click()
    page.locator('[data-id="previous-week"]:not([disabled])').wait_for()
    page.locator('[data-id^="time-"]').first.click()
    warning = page.locator('[data-id="coverage-warning"]')
    warning.wait_for()
    assert "Ihre Versicherung deckt dieses Datum nicht ab" in (warning.text_content() or "")
    assert "Support" in (page.locator('[data-id="coverage-period"]').text_content() or "")
    assert page.locator('[data-id="request"]').is_disabled()
