"""The waitlist in the browser (docs/waitlist.md): a patient joins from their list, sees the entry, and the time a
cancellation frees arrives on their open screen without a reload and is accepted after the app asks; a German
patient on a phone joins and leaves. Each screen is checked with axe."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from tests.e2e.web import confirm
from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import MOBILE, axe_violations, sign_in
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

APPROVED_TUESDAY = 7  # Dr. Berger, Berlin, Oliver Brown (patient4), approved, Tue 24 Nov 16:00 (seeded)
DOCTOR1, BERLIN = "1", "1"


def cancel_elsewhere(base_url: str, appointment: int, username: str) -> None:
    """The appointment's patient cancels it from another device."""
    with httpx.Client(base_url=base_url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}", "X-Client-Id": "other-device"}
        url = f"/profile/appointments/{appointment}/offers/cancel"
        response = http.post(url, data={"version": "1"}, headers=headers)
        assert response.status_code == 200, response.text


def test_a_patient_joins_and_accepts_the_time_a_cancellation_frees_live(server, new_page):
    page = new_page(server.url)
    sign_in(page, "patient1")
    page.locator('[data-id="waitlist"]').click()
    page.get_by_role("heading", name="Waitlist").first.wait_for()
    assert axe_violations(page) == []
    page.locator('[data-name="doctor"]').select_option(DOCTOR1)
    page.locator('[data-name="location"]').select_option(BERLIN)
    page.locator('[data-name="until"]').fill((MONDAY_MORNING + timedelta(days=1)).date().isoformat())
    page.locator('[data-id="days-tue"] input').check()
    page.locator('[data-name="from"]').fill("16:00")
    page.locator('[data-name="to"]').fill("16:30")
    page.locator('[data-id="join-send"]').click()
    entry = page.locator('[data-type="Card"][data-id^="entry-"]')
    entry.wait_for()
    assert "Dr. Anna Berger" in (entry.text_content() or "")
    cancel_elsewhere(server.url, APPROVED_TUESDAY, "patient4")
    # The offer arrives on the open screen by itself (the waitlist's loop, then the real-time path).
    offer = page.locator('[data-type="Card"][data-id^="offer-"]')
    offer.wait_for()
    assert axe_violations(page) == []
    offer.locator('[data-id^="accept-"]').click()
    assert confirm.answer(page).startswith("Take ")
    page.get_by_text("Request sent for").first.wait_for()


def test_on_a_german_phone_a_patient_joins_and_leaves(server, new_page):
    page = new_page(server.url, viewport=MOBILE, locale="de-DE")
    sign_in_as(page, "patient3")
    page.locator('[data-id="waitlist"]').click()
    page.get_by_role("heading", name="Warteliste").first.wait_for()
    assert axe_violations(page) == []
    page.locator('[data-name="location"]').select_option(BERLIN)
    page.locator('[data-name="service"]').select_option("follow-up")
    page.locator('[data-name="until"]').fill("")
    until = page.locator('[data-name="until"]')
    pattern = until.get_attribute("placeholder") or ""
    day = MONDAY_MORNING + timedelta(days=20)
    until.fill(day.strftime("%d.%m.%Y") if pattern.startswith("TT") else day.date().isoformat())
    page.locator('[data-id="join-send"]').click()
    entry = page.locator('[data-type="Card"][data-id^="entry-"]')
    entry.wait_for()
    assert "jeder Arzt" in (entry.text_content() or "")
    assert axe_violations(page) == []
    entry.get_by_role("button", name="Warteliste verlassen").click()
    page.locator('[data-id="no-entries"]').wait_for()
