"""The calendar feed screen in chromium, desktop and phone: from the appointment list, create the address (shown
once, copied with the Copy control), subscribe to it, rotate it (the old one stops working) and revoke it
(docs/calendar-feed.md)."""

from __future__ import annotations

import httpx
import pytest
from icalendar import Calendar

from tests.e2e.web import confirm
from tests.e2e.web.conftest import MOBILE, sign_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("viewport", "doctor"), [(None, "doctor1"), (MOBILE, "doctor3")], ids=["desktop", "phone"])
def test_a_doctor_creates_copies_rotates_and_revokes_the_calendar_feed(server, new_page, viewport, doctor):
    page = new_page(server.url, viewport=viewport)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    sign_in(page, doctor)
    page.locator('[data-id="calendar-feed"]').click()
    page.locator("h1", has_text="Calendar feed").wait_for()
    assert "No feed address yet" in (page.locator('[data-id="feed-status"]').text_content() or "")
    assert page.locator('[data-id="feed-new"]').is_hidden()

    page.locator('[data-id="make"]').click()
    shown = page.locator('[data-id="feed-url"]')
    page.wait_for_function(
        "() => (document.querySelector('[data-id=\"feed-url\"]')?.textContent || '').includes('.ics')"
    )
    url = (shown.text_content() or "").split("Address", 1)[-1].strip()
    assert url.startswith(server.url + "/calendar/ddcal_") and url.endswith(".ics")
    page.locator('[data-id="copy-url"]').click()
    page.locator('[data-id="copy-url"]', has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == url
    with httpx.Client(timeout=10) as http:
        feed = http.get(url)
        assert feed.status_code == 200 and feed.headers["content-type"] == "text/calendar; charset=utf-8"
        assert Calendar.from_ical(feed.content).walk("VEVENT")
    if viewport:
        # The long address wraps: nothing is wider than the phone.
        assert page.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]

    page.locator('[data-id="make"]', has_text="Rotate address").click()
    confirm.answer(page)
    page.wait_for_function(
        "old => { const t = document.querySelector('[data-id=\"feed-url\"]')?.textContent || '';"
        " return t.includes('.ics') && !t.includes(old); }",
        arg=url.rsplit("/", 1)[-1],
    )
    rotated = (shown.text_content() or "").split("Address", 1)[-1].strip()
    with httpx.Client(timeout=10) as http:
        assert http.get(url).status_code == 404
        assert http.get(rotated).status_code == 200

    page.locator('[data-id="revoke"]').click()
    assert "Revoke the calendar feed?" in confirm.answer(page)
    page.locator('[data-id="feed-notice"]', has_text="revoked").wait_for()
    assert page.locator('[data-id="feed-new"]').is_hidden()
    page.locator('[data-id="feed-status"]', has_text="No feed address yet").wait_for()
    with httpx.Client(timeout=10) as http:
        assert http.get(rotated).status_code == 404
    page.locator('[data-id="back"]').click()
    page.locator("h1", has_text="Appointments").wait_for()
