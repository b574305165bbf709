"""The doctor's week view (docs/week-view.md) in chromium: the grid of days and hours with
approved appointments, requests, offers and free times; a patient's new request appearing live; a click opening
Review and Approve; one day at a time on a phone; axe with no violation of any impact. One server for the module,
one page load per layout."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.e2e.web.conftest import MOBILE, axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 800}
EVENTS = '[data-type="Event"]'
REQUESTS = '[data-type="Event"][data-entry="request"]'
SHOTS = os.environ.get("DOCTORDESK_WEEK_SHOTS")  # a folder: write what the tests see (looking at it by eye)

# Each event's box, its day column's box and what it says.
MEASURE = """events => events.map(e => {
    const b = e.getBoundingClientRect(), d = e.closest('.day-body').getBoundingClientRect();
    return {id: e.dataset.id, kind: e.dataset.entry, tag: e.tagName, text: e.textContent,
            top: b.top, bottom: b.bottom, left: b.left, right: b.right, height: b.height,
            dayTop: d.top, dayBottom: d.bottom, dayLeft: d.left, dayRight: d.right};
})"""


def shot(page: Any, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def no_violations(page: Any) -> list[str]:
    return [f"{v['id']} ({v['impact']})" for v in axe_violations(page)]


def open_week(page: Any, user: str = "doctor1") -> None:
    sign_in(page, user)
    page.locator('[data-id="week-view"]').click()
    page.locator('[data-type="Calendar"] [data-type="Day"]').first.wait_for()


def inside_their_day(events: list[dict[str, Any]]) -> None:
    for e in events:
        assert e["left"] >= e["dayLeft"] - 0.5 and e["right"] <= e["dayRight"] + 0.5, e
        assert e["top"] >= e["dayTop"] - 0.5 and e["bottom"] <= e["dayBottom"] + 0.5, e


def book_first_free_time_next_week(page: Any) -> None:
    sign_in(page, "patient1")
    page.locator('[data-id="book"]').click()
    page.locator('[data-id="next-week"]').click()
    page.locator('[data-id="previous-week"]:not([disabled])').wait_for()
    page.locator('[data-id^="time-"]').first.click()
    page.locator('[data-id="request"]').click()
    page.locator(".toast", has_text="Request sent for").wait_for()


def test_the_week_shows_each_kind_live_and_opens_review_and_approve(server, new_page):
    page = new_page(server.url, viewport=LAPTOP)
    open_week(page)
    assert page.locator('[data-type="Day"]').count() == 7
    assert page.locator('[data-id="title"]').text_content().startswith("Week of")
    kinds = set(page.locator(EVENTS).evaluate_all("es => es.map(e => e.dataset.entry)"))
    # The demo's requests lie 2-7 days ahead, on working days: from Thursday on they all fall in the next week.
    if "request" not in kinds:
        page.locator('[data-id="week-next"]').click()
        page.locator(REQUESTS).first.wait_for()
        kinds |= set(page.locator(EVENTS).evaluate_all("es => es.map(e => e.dataset.entry)"))
        page.locator('[data-id="week-today"]').click()
        page.locator('[data-id="week-today"][disabled]').wait_for()
    assert {"appointment", "request", "free"} <= kinds, kinds
    events = page.locator(EVENTS).evaluate_all(MEASURE)
    inside_their_day(events)
    for e in events:  # requests and appointments are controls; free time is not
        assert (e["tag"] == "BUTTON") == (e["kind"] != "free"), e
    assert page.locator('[data-day-today="true"], .day[data-today="true"]').count() == 1
    shot(page, "week-desktop")
    assert no_violations(page) == []

    # Next week, then a patient books a free time there: the request shows without a reload.
    page.locator('[data-id="week-next"]').click()
    page.locator('[data-id="week-today"]:not([disabled])').wait_for()
    page.locator('#connection[data-status="live"]').wait_for()
    before = set(page.locator(REQUESTS).evaluate_all("es => es.map(e => e.dataset.id)"))
    book_first_free_time_next_week(new_page(server.url))
    page.wait_for_function("([s, n]) => document.querySelectorAll(s).length > n", arg=[REQUESTS, len(before)])
    (added,) = set(page.locator(REQUESTS).evaluate_all("es => es.map(e => e.dataset.id)")) - before
    new = page.locator(f'{REQUESTS}[data-id="{added}"]')
    assert "Maria Schmidt" in (new.text_content() or "")
    assert "Awaiting your decision" in (new.text_content() or "")
    inside_their_day(page.locator(EVENTS).evaluate_all(MEASURE))
    new.click()
    page.locator('[data-id="approve"]').wait_for()
    assert "Maria Schmidt" in page.locator("main").text_content()


def test_a_phone_shows_one_day_at_a_time_in_german(server, new_page):
    page = new_page(server.url, viewport=MOBILE, locale="de-DE")
    german_sign_in(page, "doctor1")
    page.locator('[data-id="week-view"]').click()
    page.locator('[data-type="Day"]').first.wait_for()
    assert page.locator('[data-type="Day"]').count() == 1
    first_day = page.locator('[data-type="Day"]').get_attribute("data-id")
    assert page.locator('[data-id="week-next"]').text_content() == "Nächster Tag"
    assert page.locator('[data-id="week-zone"]').text_content() == "Zeiten in Europe/Berlin."
    assert page.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]
    shot(page, "week-phone")
    assert no_violations(page) == []
    # Step through the days until one with an appointment or request: each is a tap target of at least 44 px.
    tappable: list[dict[str, Any]] = []
    for _ in range(7):
        page.locator('[data-id="week-next"]').click()
        page.wait_for_function("id => document.querySelector('[data-type=Day]').dataset.id !== id", arg=first_day)
        first_day = page.locator('[data-type="Day"]').get_attribute("data-id")
        events = page.locator(EVENTS).evaluate_all(MEASURE)
        inside_their_day(events)
        tappable = [e for e in events if e["tag"] == "BUTTON"]
        if tappable:
            break
    assert tappable, "the demo week has a booked day"
    for e in tappable:
        assert e["height"] >= 44 and e["right"] - e["left"] >= 44, e
    assert any(w in (tappable[0]["text"] or "") for w in ("Zugesagt", "Wartet auf Ihre Entscheidung", "Angebot"))


LOOK = "e => { const s = getComputedStyle(e); return [s.backgroundColor, s.outlineStyle, s.boxShadow]; }"


def test_the_weeks_links_look_alike_on_arrival_and_hover_shows_once_the_pointer_moves(server, new_page):
    """The first link used to be drawn highlighted: it lands where the mouse clicked "Week" on the list, and the
    mouse had not moved. Every link of the week's toolbar looks the same on arrival; hovering still shows."""
    page = new_page(server.url, viewport=LAPTOP)
    sign_in(page, "doctor1")
    page.locator('[data-id="week-view"]').click()
    page.locator('[data-type="Calendar"] [data-type="Day"]').first.wait_for()
    links = page.locator('[data-id="week-nav"] .link:not(:disabled)')
    assert links.count() >= 3
    first = links.first
    # The mouse rests where the week's first link will be drawn, and "Week" is opened from the list without moving
    # it (the list's head is one line now, so its "Week" no longer lies there by chance).
    spot = first.bounding_box()
    page.locator('[data-id="week-list"]').click()
    page.locator('[data-id="week-view"]').wait_for()
    page.mouse.move(spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2)
    page.locator('[data-id="week-view"]').focus()
    page.keyboard.press("Enter")
    page.locator('[data-type="Calendar"] [data-type="Day"]').first.wait_for()
    assert first.evaluate("e => e.matches(':hover')")  # the mouse rests on it, as it did for the doctor
    looks = links.evaluate_all(f"links => links.map({LOOK})")
    assert all(look == looks[-1] for look in looks), looks
    assert looks[0][0] in ("rgba(0, 0, 0, 0)", "transparent")
    box = first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2 + 2, box["y"] + box["height"] / 2)
    page.wait_for_function(
        "e => getComputedStyle(e).backgroundColor !== 'rgba(0, 0, 0, 0)'", arg=first.element_handle()
    )
