"""The fees, insurance and webhook administration screens and the one-time password link in the browser, desktop
(1366×800) and phone (390×844): a fee version from a later day joins the history, a policy is added, a webhook is
registered with its secret shown once, tested, replayed and disabled, and a user sets their own password through
a link that then stops working (docs/administration.md)."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pytest

from tests.e2e.web.confirm import answer as answer_question
from tests.e2e.web.conftest import sign_in
from tests.e2e.web.test_language import german_sign_in
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


def open_section(page, key: str, title: str) -> None:
    sign_in(page, "admin")
    page.locator('[data-id="administration"]').click()
    page.locator("h1", has_text="Users").wait_for()
    page.locator(f'[data-id="nav-{key}"]').click()
    page.locator("h1", has_text=title).wait_for()


def admin_in(server, new_page, locale: str):
    """The administration, signed in as the admin in a browser speaking ``locale``."""
    page = new_page(server.url, viewport=DESKTOP, locale=locale)
    if locale == "de-DE":
        german_sign_in(page, "admin")
    else:
        sign_in(page, "admin")
    page.locator('[data-id="administration"]').click()
    return page


def user_id(base_url: str, username: str) -> int:
    with httpx.Client(base_url=base_url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        users = http.get("/admin/users", params={"limit": 500}, headers={"Authorization": f"Bearer {token}"})
        return next(u["id"] for u in users.json()["users"] if u["username"] == username)


@VIEWPORTS
def test_a_fee_version_from_a_later_day_joins_the_history(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    open_section(page, "fees", "Fees")
    versions = page.locator('[data-id^="version-text-"]')
    before = versions.count()
    amount = "123.45" if viewport is DESKTOP else "67.89"
    day = (MONDAY_MORNING + timedelta(days=7)).date().isoformat()
    page.locator('[data-name="kind"]').select_option("location_fee")
    page.locator('[data-name="amount"]').fill(amount)
    page.locator('[data-name="effective_from"]').fill(day)
    page.locator('[data-id="add-fee"]').click()
    # Nothing is saved before the admin has read what changes, for whom, from when.
    confirm = page.locator('[data-id="fee-confirm-text"]')
    confirm.wait_for()
    assert f"→ €{amount}" in (confirm.text_content() or "") and "Nothing is saved until you confirm" in (
        confirm.text_content() or ""
    )
    assert versions.count() == before
    page.locator('[data-id="confirm-fee"]').click()
    page.locator('[data-id="saved"]', has_text=f"€{amount}").wait_for()  # money in the reader's format
    page.locator('[data-id="fee-confirm"]').wait_for(state="hidden")
    page.wait_for_function(
        "n => document.querySelectorAll('[data-id^=\"version-text-\"]').length === n", arg=before + 1
    )
    assert amount in (versions.first.text_content() or "")
    in_force = " ".join(page.locator('[data-id^="fee-text-"]').all_text_contents())
    assert amount not in in_force  # not before its day
    assert page.locator('[data-name="amount"]').input_value() == ""


@pytest.mark.parametrize(("locale", "title", "required"), [
    ("en-GB", "Fees", "Required: the fee's amount"), ("de-DE", "Gebühren", "Erforderlich: der Betrag"),
])  # fmt: skip
def test_an_empty_fee_form_saves_nothing_and_names_the_amount(server, new_page, locale, title, required):
    page = admin_in(server, new_page, locale)
    page.locator('[data-id="nav-fees"]').click()
    page.locator("h1", has_text=title).wait_for()
    before = page.locator('[data-id^="version-text-"]').count()
    page.locator('[data-id="add-fee"]').click()
    message = page.locator('[data-id="fee-amount"] .msg-error')
    message.wait_for()
    assert required in (message.text_content() or "")
    assert page.locator('[data-name="amount"]').get_attribute("aria-invalid") == "true"
    assert not page.locator('[data-id="fee-confirm"]').is_visible()
    assert page.locator('[data-id^="version-text-"]').count() == before


@VIEWPORTS
def test_a_policy_is_added_for_a_patient(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    open_section(page, "insurance", "Insurance")
    number = "E2E-D" if viewport is DESKTOP else "E2E-P"
    cards = page.locator('[data-type="Card"][data-id^="policy-"]')
    before = cards.count()
    page.locator('[data-id="new-policy"] [data-name="insurer"]').fill("Browser Kasse")
    page.locator('[data-id="new-policy"] [data-name="policy_number"]').fill(number)
    page.locator('[data-id="new-policy"] [data-name="valid_from"]').fill("2026-01-01")
    page.locator('[data-id="new-policy"] [data-name="valid_to"]').fill("2027-12-31")
    page.locator('[data-id="new-policy"] [data-name="excluded_services"]').fill("massage")
    page.locator('[data-id="create"]').click()
    page.locator('[data-id="saved"]', has_text=f"Added Browser Kasse {number}.").wait_for()
    page.wait_for_function(
        'n => document.querySelectorAll(\'[data-type="Card"][data-id^="policy-"]\').length === n', arg=before + 1
    )


# The browser's own language decides a native date input's order (mm/dd/yyyy in an American English chromium);
# the app writes days the clinic's way in the page's language instead (docs/web-app.md#dates-in-forms).
DAY_FORMATS = pytest.mark.parametrize(("locale", "hint", "typed", "shown", "refused", "message"), [
    ("en-US", "DD/MM/YYYY", "2/1/2027", "02/01/2027", "31/02/2027", "Enter the date as DD/MM/YYYY (or YYYY-MM-DD)."),
    ("de-DE", "TT.MM.JJJJ", "2.1.2027", "02.01.2027", "31.02.2027",
     "Geben Sie das Datum als TT.MM.JJJJ ein (oder JJJJ-MM-TT)."),
], ids=["english", "german"])  # fmt: skip


@DAY_FORMATS
def test_days_are_shown_and_taken_in_the_clinics_format(server, new_page, locale, hint, typed, shown, refused, message):
    page = admin_in(server, new_page, locale)
    page.locator('[data-id="nav-insurance"]').click()
    page.locator('[data-id="new-policy"]').wait_for()
    form = page.locator('[data-id="new-policy"]')
    start = form.locator('[data-name="valid_from"]')
    # A text field in the clinic's format, with the pattern as placeholder and as a hint it is described by.
    assert start.get_attribute("type") == "text" and start.get_attribute("placeholder") == hint
    hint_id = start.get_attribute("aria-describedby")
    assert page.locator(f"#{hint_id}").text_content() == f"Format: {hint}"
    # A stored day is shown the same way.
    days = page.locator('[data-id="policies"] [data-name="valid_from"]')
    stored = days.first.input_value()
    assert re.fullmatch(r"\d\d([/.])\d\d\1\d{4}", stored) and stored[2] == hint[2], stored
    cards = page.locator('[data-type="Card"][data-id^="policy-"]')
    before = cards.count()
    number = f"DAY-{locale}"
    form.locator('[data-name="insurer"]').fill("Datum Kasse")
    form.locator('[data-name="policy_number"]').fill(number)
    start.fill(refused)  # no such day
    form.locator('[data-name="valid_to"]').fill(typed.replace("2027", "2028"))
    page.locator('[data-id="create"]').click()
    error = form.locator('[data-id="new-from"] .msg-error')
    error.wait_for()
    assert error.text_content() == message
    assert start.get_attribute("aria-invalid") == "true"
    assert hint_id in (start.get_attribute("aria-describedby") or "").split()
    assert page.locator('[data-id="policies"] .msg-error').count() == 0  # not on another policy's field
    assert cards.count() == before  # nothing written
    start.fill(typed)
    page.locator('[data-id="create"]').click()
    page.wait_for_function(
        'n => document.querySelectorAll(\'[data-type="Card"][data-id^="policy-"]\').length === n', arg=before + 1
    )
    saved = page.evaluate(
        """number => [...document.querySelectorAll('[data-type="Card"][data-id^="policy-"]')]
            .find((card) => card.querySelector('[data-name="policy_number"]').value === number)
            .querySelector('[data-name="valid_from"]').value""",
        number,
    )
    assert saved == shown  # 2 January, day first


@VIEWPORTS
def test_a_webhook_is_registered_tested_replayed_and_disabled(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    open_section(page, "webhooks", "Webhooks")
    url = f"https://hooks.example.com/{'desk' if viewport is DESKTOP else 'phone'}"
    page.locator('[data-id="new-webhook"] [data-name="url"]').fill(url)
    page.locator('[data-id="new-webhook"] [data-name="type~appointment.approved"]').check()
    page.locator('[data-id="register"]').click()
    created = page.locator('[data-id="created"]')
    created.wait_for()
    match = re.search(r"Signing secret: (whsec_\S+)", created.text_content() or "")
    assert match
    page.get_by_role("button", name=url).click()
    page.locator("h1", has_text="Webhook #").wait_for()
    assert match.group(1) not in page.content()  # shown once
    page.locator('[data-id="send-test"]').click()
    page.locator('[data-id="saved"]', has_text="Test event queued").wait_for()
    row = page.locator('[data-type="Row"][data-id^="delivery-"]').first
    row.wait_for()
    assert "webhook.test" in (row.text_content() or "")
    row.locator('[data-id^="replay-"]').click()
    page.locator('[data-id="saved"]', has_text="Replay queued").wait_for()
    page.locator('[data-id="toggle-enabled"]', has_text="Disable").click()
    assert "Disable this endpoint?" in answer_question(page)
    page.locator('[data-id="toggle-enabled"]', has_text="Enable").wait_for()
    assert "Disabled" in (page.locator('[data-id="state"]').text_content() or "")


@VIEWPORTS
def test_a_user_sets_their_own_password_through_a_one_time_link(server, new_page, viewport):
    username = "support1" if viewport is DESKTOP else "support2"
    admin = new_page(server.url, viewport=viewport)
    sign_in(admin, "admin")
    admin.goto(f"/#/profile/admin/users/{user_id(server.url, username)}")
    admin.reload()
    admin.locator('[data-id="password-link"]').click()
    notice = admin.locator('[data-id="new-password"]')
    notice.wait_for()
    link = re.search(r"(http\S+/#/set-password/\S+)", notice.text_content() or "")
    assert link
    user = new_page(server.url, viewport=viewport)
    user.goto(link.group(1))
    user.locator("h1", has_text="Set your password").wait_for()
    assert "set-password" not in user.url  # the token left the address bar
    user.locator("#set-password-new").fill("chosen by me")
    user.locator("#set-password-again").fill("chosen by me")
    user.get_by_role("button", name="Set password").click()
    user.locator("#login-error", has_text="Your password is set").wait_for()
    assert user.locator("#login-username").input_value() == username
    user.locator("#login-password").fill("chosen by me")
    user.get_by_role("button", name="Sign in").click()
    user.locator('[data-id="title"]').wait_for()
    again = new_page(server.url, viewport=viewport)
    again.goto(link.group(1))
    again.locator("#set-password-new").fill("someone else")
    again.locator("#set-password-again").fill("someone else")
    again.get_by_role("button", name="Set password").click()
    again.locator("#set-password-error", has_text="not valid").wait_for()
