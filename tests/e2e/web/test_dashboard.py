"""The dashboard in the browser (docs/dashboard.md), in English and German, on a desktop (1366×800) and a phone
(390×844): each chart's picture is shown, its table is reachable from the keyboard behind its disclosure, the CSV
is offered beneath it, axe finds nothing; the admin's doctor filter shows one doctor; a doctor opens their own
from the list."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web.conftest import axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}
LANGUAGES = {"en": "en-GB", "de": "de-DE"}
TEXTS = {
    "en": {"title": "Requests per day", "table": "Table: Requests per day", "day": "Day", "clinic": "Whole clinic"},
    "de": {"title": "Anfragen pro Tag", "table": "Tabelle: Anfragen pro Tag", "day": "Tag", "clinic": "Ganze Praxis"},
}
KEYS = ("requests", "decision-time", "booked-share", "attendance", "reminders", "waitlist")  # all six


def signed_in(server: Any, new_page: Any, username: str, language: str, viewport: dict[str, int]) -> Any:
    page = new_page(server.url, viewport=viewport, locale=LANGUAGES[language])
    (german_sign_in if language == "de" else sign_in)(page, username)
    return page


def assert_charts_shown(page: Any, texts: dict[str, str]) -> None:
    for key in KEYS:
        picture = page.locator(f'[data-id="chart-{key}"] img.chart-picture')
        picture.wait_for()
        assert picture.evaluate("img => img.complete && img.naturalWidth > 0"), key
        assert picture.get_attribute("alt")
    requests = page.locator('[data-id="chart-requests"]')
    assert texts["title"] in (requests.locator("figcaption").text_content() or "")
    table = requests.locator("table")
    assert not table.is_visible()
    summary = requests.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")  # the table is reached from the keyboard
    table.wait_for()
    assert table.locator("caption").text_content() == texts["title"]
    assert table.locator("thead th").first.text_content() == texts["day"]
    assert table.locator("tbody tr").count() == 90
    assert requests.locator('[data-id="csv-requests"] button').is_visible()


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_admins_dashboard_shows_every_chart_with_its_table_and_is_axe_clean(
    server, new_page, problems, language, viewport
):
    texts = TEXTS[language]
    page = signed_in(server, new_page, "admin", language, viewport)
    page.locator('[data-id="administration"]').click()
    page.locator('[data-id="nav-dashboard"]').click()
    assert_charts_shown(page, texts)
    assert page.locator('[data-name="doctor"] option').first.text_content() == texts["clinic"]
    violations = [f"{v['id']} ({v['impact']}) {v['targets']}" for v in axe_violations(page) if v.get("impact")]
    assert violations == []
    assert problems.unexpected() == []


def test_the_admin_chooses_one_doctor_and_sees_only_their_share(server, new_page, problems):
    page = signed_in(server, new_page, "admin", "en", DESKTOP)
    page.locator('[data-id="administration"]').click()
    page.locator('[data-id="nav-dashboard"]').click()
    rows = page.locator('[data-id="chart-booked-share"] tbody tr')
    rows.first.wait_for(state="attached")
    assert rows.count() > 1
    chosen = page.locator('[data-name="doctor"] option').nth(1).text_content()
    page.locator('[data-name="doctor"]').select_option(index=1)
    page.wait_for_function("() => document.querySelectorAll('[data-id=\"chart-booked-share\"] tbody tr').length === 1")
    assert rows.first.locator("th").text_content() == chosen
    assert problems.unexpected() == []


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_doctor_opens_their_own_dashboard_from_the_list(server, new_page, problems, language, viewport):
    page = signed_in(server, new_page, "doctor1", language, viewport)
    page.locator('[data-id="dashboard"]').click()
    assert_charts_shown(page, TEXTS[language])
    assert page.locator('[data-id="chart-booked-share"] tbody tr').count() == 1
    violations = [f"{v['id']} ({v['impact']}) {v['targets']}" for v in axe_violations(page) if v.get("impact")]
    assert violations == []
    assert problems.unexpected() == []
