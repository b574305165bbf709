"""The appointment list's "show more" in a real browser, desktop and phone: each click adds the next page of a
section below the rows shown, no row twice, and the rows stay through the list's later updates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.web.conftest import DESKTOP, MOBILE, decide_elsewhere, sign_in
from tests.support.live import LiveServer, serving
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

PAGE = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The demo clinic with two rows per page, so its few past appointments take several pages."""
    with serving(
        tmp_path_factory.mktemp("paging-live"), at=MONDAY_MORNING, DOCTORDESK_LIST_PAGE_SIZE=str(PAGE)
    ) as live:
        yield live


def _rows(page: Any, section: str) -> list[str]:
    ids: list[str] = page.locator(f'[data-id="{section}"] [data-type="Row"]').evaluate_all(
        "rows => rows.map(r => r.dataset.id)"
    )
    return ids


@pytest.mark.parametrize("viewport", [DESKTOP, MOBILE], ids=["desktop", "phone"])
def test_show_older_adds_the_next_past_appointments_below_with_no_row_twice(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    sign_in(page, "patient1")
    past = page.locator('[data-id="past"]')
    assert len(_rows(page, "past")) == PAGE
    seen = _rows(page, "past")
    clicks = 0
    while (button := past.get_by_role("button", name="Show older")).is_visible():
        button.click()
        page.wait_for_function(
            '([n]) => document.querySelectorAll(\'[data-id="past"] [data-type="Row"]\').length > n',
            arg=[len(seen)],
        )
        now = _rows(page, "past")
        assert now[: len(seen)] == seen  # the rows shown stay where they were; the new ones come below
        assert len(now) == len(set(now))
        seen = now
        clicks += 1
    assert clicks >= 1
    assert page.locator('[data-id="past-more"]').is_hidden()
    if viewport is MOBILE:
        assert page.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]


def test_rows_shown_by_show_more_stay_when_the_list_updates_in_real_time(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    past = page.locator('[data-id="past"]')
    past.get_by_role("button", name="Show older").click()
    page.wait_for_function(
        '([n]) => document.querySelectorAll(\'[data-id="past"] [data-type="Row"]\').length > n', arg=[PAGE]
    )
    shown = _rows(page, "past")
    needs = page.locator('[data-id="needs-decision"]')
    first = needs.locator('[data-type="Row"]').first.get_attribute("data-id")
    assert first is not None
    appointment = int(first.removeprefix("appointment-"))
    decide_elsewhere(server.url, appointment, "decline")
    # The declined request leaves "Awaiting your decision" through the stream or the poll, without a reload,
    # and joins the rows shown in "Past and closed" (which keeps the rows it showed).
    page.locator(f'[data-id="needs-decision"] [data-id="{first}"]').wait_for(state="detached")
    page.locator(f'[data-id="past"] [data-id="{first}"]').wait_for()
    assert set(shown) <= set(_rows(page, "past"))
