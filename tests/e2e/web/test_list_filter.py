"""The appointment list's filter and search in a real browser, desktop and phone: Enter in the search box
narrows every section, the filter is in the URL (reload and Back keep it), and real-time updates keep it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.web.any_language import sign_in_as
from tests.e2e.web.conftest import DESKTOP, MOBILE, decide_elsewhere, sign_in

pytestmark = pytest.mark.browser


def _patients(page: Any) -> list[str]:
    names: list[str] = page.locator('[data-type="Row"] [data-id^="patient-"] .regular-value').evaluate_all(
        "cells => cells.map(c => c.textContent)"
    )
    return names


def open_filter(page: Any) -> None:
    """The filter is folded into one line: its toggle opens the form (unless it is open already)."""
    toggle = page.locator('[data-id="filters"] .fold-toggle')
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def _rows(page: Any) -> list[str]:
    ids: list[str] = page.locator('main [data-type="Row"]').evaluate_all("rows => rows.map(r => r.dataset.id)")
    return ids


def _wait_rows(page: Any, *, only: str) -> None:
    page.wait_for_function(
        """([name]) => {
            const cells = [...document.querySelectorAll('[data-type="Row"] [data-id^="patient-"] .regular-value')];
            return cells.length > 0 && cells.every(c => c.textContent === name);
        }""",
        arg=[only],
    )


@pytest.mark.parametrize("viewport", [DESKTOP, MOBILE], ids=["desktop", "phone"])
def test_searching_a_patient_narrows_the_list_and_reload_and_back_keep_the_filter(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    sign_in(page, "doctor1")
    everyone = set(_patients(page))
    assert len(everyone) > 1
    open_filter(page)
    box = page.get_by_label("Patient name")
    box.fill("SCHM")
    box.press("Enter")
    page.wait_for_url(re.compile(r"q=SCHM"))
    _wait_rows(page, only="Maria Schmidt")
    filtered = _rows(page)
    assert filtered and set(_patients(page)) == {"Maria Schmidt"}
    assert page.locator('[data-id="clear-filter"]').is_visible()
    assert page.locator('[data-id="chip-q"]').is_visible()

    page.reload()
    page.locator('[data-id="title"]').wait_for()
    _wait_rows(page, only="Maria Schmidt")
    assert _rows(page) == filtered
    open_filter(page)
    assert page.get_by_label("Patient name").input_value() == "SCHM"

    page.go_back()
    page.wait_for_function(
        '() => new Set([...document.querySelectorAll(\'[data-type="Row"] [data-id^="patient-"] .regular-value\')]'
        ".map(c => c.textContent)).size > 1"
    )
    assert page.get_by_label("Patient name").input_value() == ""
    if viewport is MOBILE:
        assert page.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]


def test_a_status_filter_applied_with_the_button_is_kept_by_real_time_updates(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_filter(page)
    page.get_by_label("Status").select_option("requested")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"status=requested"))
    page.wait_for_function("() => document.querySelector('[data-id=\"upcoming-empty\"]')?.hidden === false")
    requests = page.locator('[data-id="needs-decision"] [data-type="Row"]')
    first = requests.first.get_attribute("data-id")
    assert first is not None
    count = requests.count()
    decide_elsewhere(server.url, int(first.removeprefix("appointment-")), "decline")
    # The declined request leaves the list through the stream or the poll; nothing outside the filter comes in.
    page.locator(f'[data-id="{first}"]').wait_for(state="detached")
    assert requests.count() == count - 1
    assert page.locator('[data-id="past"] [data-type="Row"]').count() == 0
    assert page.locator('[data-id="upcoming"] [data-type="Row"]').count() == 0
    open_filter(page)
    assert page.get_by_label("Status", exact=True).input_value() == "requested"


@pytest.mark.parametrize(
    ("locale", "words"),
    [
        ("en-GB", {"toggle": "Filter", "status": "Status: Requested", "q": "Patient: schm", "remove": "Remove"}),
        ("de-DE", {"toggle": "Filter", "status": "Status: Angefragt", "q": "Patient: schm", "remove": "entfernen"}),
    ],
    ids=["en", "de"],
)
def test_the_filter_is_one_line_with_the_active_filter_as_chips_each_removing_its_part(server, new_page, locale, words):
    page = new_page(server.url, viewport=DESKTOP, locale=locale)
    sign_in_as(page, "doctor1")
    toggle = page.locator('[data-id="filters"] .fold-toggle')
    # Folded: the toggle alone, on the title's line; the form opens on demand.
    assert toggle.inner_text().strip().startswith(words["toggle"])
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator('[data-id="f-status"]').is_visible()
    title, fold = (page.locator(s).bounding_box() for s in ('[data-id="title"]', '[data-id="filters"]'))
    assert abs((title["y"] + title["height"] / 2) - (fold["y"] + fold["height"] / 2)) < 12
    open_filter(page)
    assert page.locator('[data-id="f-status"] select').is_visible()
    page.locator('[data-id="f-status"] select').select_option("requested")
    page.locator('[data-id="f-q"] input').fill("schm")
    page.locator('[data-id="apply-filter"]').click()
    page.wait_for_url(re.compile(r"status=requested.*q=schm"))
    _wait_rows(page, only="Maria Schmidt")
    # Applied: folded again, the filter in words as chips that say what activating them removes.
    assert toggle.get_attribute("aria-expanded") == "false"
    status, name = page.locator('[data-id="chip-status"]'), page.locator('[data-id="chip-q"]')
    assert status.inner_text().startswith(words["status"]) and name.inner_text().startswith(words["q"])
    assert words["remove"] in (status.get_attribute("aria-label") or "")
    name.click()
    page.wait_for_url(re.compile(r"status=requested$"))
    page.wait_for_function(
        '() => new Set([...document.querySelectorAll(\'[data-id="needs-decision"] [data-id^="patient-"]\')]'
        ".map(c => c.textContent)).size > 1"
    )
    assert page.locator('[data-id="chip-q"]').count() == 0 and status.is_visible()
    assert page.locator('[data-id="past"] [data-type="Row"]').count() == 0  # the status part stayed


def test_a_refused_filter_opens_the_fold_at_the_field(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "doctor1")
    open_filter(page)
    page.locator('[data-id="f-from"] input').fill("02/12/2026")
    page.locator('[data-id="f-to"] input').fill("01/12/2026")
    page.locator('[data-id="apply-filter"]').click()
    to = page.locator('[data-id="f-to"] input')
    page.wait_for_function("() => document.querySelector('[data-id=\"f-to\"] input').ariaInvalid === 'true'")
    assert to.is_visible() and page.locator('[data-id="filters"] .fold-toggle').get_attribute("aria-expanded") == "true"
