"""The appointment list for a day's work (issue 30, defect 4): one line per appointment on a desktop (time, patient,
location, service, status, unread, actions), at least 10 whole rows in view at 1366×800, and on a phone (390×844)
still one tap target of at least 44 px per action, nothing cut off or overlapping."""

from __future__ import annotations

from typing import Any

import pytest

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
