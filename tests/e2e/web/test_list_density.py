"""The appointment list for a day's work: one line per appointment on a desktop (time, patient,
location, service, status, unread, actions); as the page opens, with the filter folded into the title's line, at
least 10 whole rows in view at 1366×800 and at least 4 on a 390×844 phone, in English and in German; on a phone
still one tap target of at least 44 px per action, nothing cut off or overlapping. With the chat panel beside it,
the list keeps time, patient, status and actions, and the patient's name is read whole."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import sign_in

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}
ROWS = '[data-type="Row"][data-id^="appointment-"]'

# For each row: its box, and the boxes of its parts (the row's direct children).
MEASURE = """rows => rows.map(row => {
    const box = row.getBoundingClientRect();
    const parts = [...row.querySelector('.row-body').children].filter(c => !c.hidden && c.offsetParent !== null)
        .map(c => { const b = c.getBoundingClientRect();
                    return {id: c.dataset.id, type: c.dataset.type, top: b.top, bottom: b.bottom, left: b.left,
                            right: b.right, height: b.height, width: b.width}; });
    return {id: row.dataset.id, top: box.top, bottom: box.bottom, height: box.height, parts};
})"""


def rows_on_opening(page: Any) -> list[dict[str, Any]]:
    """The rows wholly inside the viewport as the list opens (not scrolled)."""
    assert page.evaluate("scrollY") == 0
    height = page.evaluate("innerHeight")
    rows = page.locator(ROWS).evaluate_all(MEASURE)
    return [r for r in rows if r["top"] >= 0 and r["bottom"] <= height]


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
@pytest.mark.parametrize(("viewport", "least"), [(LAPTOP, 10), (PHONE, 4)], ids=["laptop", "phone"])
def test_the_list_opens_with_a_day_of_whole_rows_in_view(server, new_page, viewport, least, locale):
    page = new_page(server.url, viewport=viewport, locale=locale)
    sign_in_as(page, "doctor1")
    page.locator(ROWS).first.wait_for()
    whole = rows_on_opening(page)
    print(f"doctor1 {locale} {viewport}: {len(whole)} whole rows, the first at {round(whole[0]['top'])} px")
    assert len(whole) >= least


def rows_in_view(page: Any) -> list[dict[str, Any]]:
    """The rows wholly inside the viewport with the list's first row scrolled to the top."""
    page.locator(ROWS).first.evaluate("row => row.scrollIntoView({block: 'start'})")
    height = page.evaluate("innerHeight")
    rows = page.locator(ROWS).evaluate_all(MEASURE)
    return [r for r in rows if r["top"] >= 0 and r["bottom"] <= height]


@pytest.mark.parametrize("user", ["doctor1", "support1"])
def test_a_desktop_list_shows_at_least_ten_whole_rows_of_one_line_each(server, new_page, user):
    page = new_page(server.url, viewport=LAPTOP)
    sign_in(page, user)
    page.locator(ROWS).first.wait_for()
    assert page.locator(ROWS).count() >= 12, "the demo list is long enough to measure"
    whole = rows_in_view(page)
    print(f"{user}: {len(whole)} whole rows at 1366x800, heights {sorted({round(r['height']) for r in whole})}")
    assert len(whole) >= 10
    for row in page.locator(ROWS).evaluate_all(MEASURE):
        # One line: every part of the row (time, names, place, service, badges, actions) shares one band.
        assert row["height"] <= 48, row
        middles = [(p["top"] + p["bottom"]) / 2 for p in row["parts"]]
        assert max(middles) - min(middles) <= 12, row
        kinds = {p["id"].split("-")[0] for p in row["parts"]}
        assert {"time", "location", "service", "status", "chat"} <= kinds, row
        assert "patient" in kinds
        # Nothing overlaps its neighbour.
        ordered = sorted(row["parts"], key=lambda p: p["left"])
        for a, b in zip(ordered, ordered[1:], strict=False):
            assert a["right"] <= b["left"] + 0.5, (a, b)


def test_a_phone_keeps_one_tap_target_per_action_and_shows_each_row_whole(server, new_page):
    page = new_page(server.url, viewport=PHONE)
    sign_in(page, "doctor1")
    page.locator(ROWS).first.wait_for()
    rows = page.locator(ROWS).evaluate_all(MEASURE)
    for row in rows:
        actions = [p for p in row["parts"] if p["type"] == "Link"]
        assert actions, row
        for action in actions:
            assert action["height"] >= 44 and action["width"] >= 44, action  # a finger's tap target
            assert action["right"] <= PHONE["width"], action
        for part in row["parts"]:
            assert part["left"] >= 0 and part["right"] <= PHONE["width"], part
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]  # no sideways scrolling


NAMES = """rows => rows.map(row => {
    const cell = row.querySelector('[data-kind="patient"] .regular-value');
    const shown = [...row.querySelector('.row-body').children].filter(c => c.offsetParent !== null);
    return {id: row.dataset.id, name: cell.textContent, scroll: cell.scrollWidth, client: cell.clientWidth,
            kinds: shown.map(c => c.dataset.kind)};
})"""


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_beside_the_chat_panel_the_list_keeps_time_patient_status_and_actions_with_whole_names(
    server, new_page, locale
):
    page = new_page(server.url, viewport=LAPTOP, locale=locale)
    sign_in_as(page, "doctor1")
    page.locator(ROWS).first.locator('[data-id^="chat-"]').click()
    page.locator("body.has-embedded-panel #panel:not([hidden])").wait_for()
    rows = page.locator(ROWS).evaluate_all(NAMES)
    assert len(rows) >= 10
    for row in rows:
        assert row["name"] and row["scroll"] <= row["client"], row  # the name is not cut
        assert "location" not in row["kinds"] and "service" not in row["kinds"], row
        assert {"time", "patient", "status", "chat"} <= set(row["kinds"]), row
    panel = page.locator("#panel").bounding_box()
    for row in page.locator(ROWS).evaluate_all(MEASURE):
        assert all(p["right"] <= panel["x"] for p in row["parts"]), row  # nothing runs under the panel
    # Closed again: the columns are back.
    page.locator("#panel-close").click()
    page.locator("#panel").wait_for(state="hidden")
    assert page.locator(ROWS).first.locator('[data-kind="location"]').is_visible()
