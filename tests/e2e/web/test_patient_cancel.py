"""A patient cancels their own appointment in the browser (docs/booking.md#cancelling), in English and German: a
confirmation that names the appointment, an optional reason, the patient's list shows it canceled and the doctor's
open list loses the request without a reload."""

from __future__ import annotations

import pytest

from tests.e2e.web.conftest import sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

REQUESTED = 1  # doctor1, Berlin, patient1, Wed 25 Nov 09:00 (seeded)
APPROVED = 8  # doctor1, Munich, patient1, Tue 01 Dec 09:30 (seeded)


def test_a_patient_cancels_a_request_after_a_confirmation_and_the_doctors_list_follows(server, new_page):
    doctor = new_page(server.url)
    sign_in(doctor, "doctor1")
    doctor.locator('#connection[data-status="live"]').wait_for()
    request_row = doctor.locator(f'[data-id="needs-decision"] [data-id="appointment-{REQUESTED}"]')
    request_row.wait_for()

    page = new_page(server.url)
    sign_in(page, "patient1")
    page.locator(f'[data-id="offers-{REQUESTED}"]').click()
    page.get_by_role("heading", name="Your appointment").wait_for()
    note = page.locator('[data-id="status-note"]')
    assert "Your request for Wed 25 Nov 2026, 09:00" in (note.text_content() or "")
    assert "is waiting for the doctor." in (note.text_content() or "")
    assert not page.locator('[data-id="reject-all"]').is_visible()  # no offers: nothing to reject
    page.get_by_role("button", name="Cancel appointment").click()
    dialog = page.get_by_role("dialog", name="Cancel this appointment?")
    dialog.wait_for()
    assert "Your appointment with Dr. Anna Berger at Berlin Mitte Clinic on Wed 25 Nov 2026, 09:00" in (
        dialog.text_content() or ""
    )
    # "Keep appointment" closes it and keeps the appointment.
    keep = dialog.get_by_role("link", name="Keep appointment")
    keep.or_(dialog.get_by_role("button", name="Keep appointment")).click()
    dialog.wait_for(state="hidden")
    page.get_by_role("button", name="Cancel appointment").click()
    dialog = page.get_by_role("dialog", name="Cancel this appointment?")
    dialog.wait_for()
    dialog.get_by_label("Reason (optional)").fill("Feeling better")
    dialog.get_by_role("button", name="Cancel appointment").click()
    page.locator(f'[data-id="status-{REQUESTED}"][data-value="Canceled"]').wait_for()
    # The doctor's open list follows live: the request leaves "Awaiting your decision".
    request_row.wait_for(state="detached")


def test_a_patient_cancels_an_approved_appointment_in_german(server, new_page):
    page = new_page(server.url, locale="de-DE")
    german_sign_in(page, "patient1")
    page.locator(f'[data-id="offers-{APPROVED}"]').click()
    page.get_by_role("heading", name="Ihr Termin").wait_for()
    assert "ist bestätigt" in (page.locator('[data-id="status-note"]').text_content() or "")
    page.get_by_role("button", name="Termin stornieren").click()
    dialog = page.get_by_role("dialog", name="Diesen Termin stornieren?")
    dialog.wait_for()
    assert "Ihr Termin bei Dr. Anna Berger in" in (dialog.text_content() or "")
    dialog.get_by_role("button", name="Termin stornieren").click()
    page.locator(f'[data-id="status-{APPROVED}"][data-value="Storniert"]').wait_for()
