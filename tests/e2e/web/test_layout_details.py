"""Details of the web app a doctor or support agent would stumble on, in a real browser, desktop and phone where
it applies: a suggestion that could only fail is disabled with the reason, the decline reason's message shows
once, "Doctor fee" stays beside its amount, the disclaimer checkbox beside its label, the top bar on one row,
toasts clear of the banner's Dismiss, the desktop chat using the panel's height, and a new tab on a deep URL
joining the browser's session."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.web.conftest import DESKTOP, MOBILE, sign_in
from tests.e2e.web.test_review import fill_card, open_review, weekday_ahead

pytestmark = pytest.mark.browser

PLAIN_REQUEST = 1  # patient1, Berlin
DISCLAIMER_REQUEST = 2
MUNICH_REQUEST = 3
EXPIRED_POLICY = 4  # Jonas Weber: his policy ended a month ago

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, MOBILE], ids=["desktop", "phone"])


def _box(page: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] | None = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@VIEWPORTS
def test_suggest_another_alternative_is_disabled_with_the_reason_when_the_policy_has_expired(
    server, new_page, viewport
):
    page = new_page(server.url, viewport=viewport)
    sign_in(page, "doctor1")
    open_review(page, EXPIRED_POLICY)
    assert page.locator('[data-id="another-alternative"]').is_disabled()
    assert page.get_by_text("the patient's policy does not cover any date from today on").is_visible()


def test_the_missing_decline_reason_is_said_once(server, new_page, problems):
    problems.allowed.append("422")
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, MUNICH_REQUEST)
    page.locator('[data-id="decline"]').click()
    dialog = page.get_by_role("dialog", name="Decline the request")
    dialog.get_by_role("button", name="Decline").click()
    page.locator('[data-id="reason"] .msg-error').wait_for()
    page.wait_for_timeout(300)  # anything else the answer would show is shown by now
    said = page.evaluate(
        """() => [...document.querySelectorAll('.msg-error, .screen-banner p, .toast')]
            .filter(e => e.getClientRects().length > 0).map(e => e.textContent)"""
    )
    assert said == ["Enter a reason."]
    page.keyboard.press("Escape")
    assert page.locator("#main-screen .screen-banner").is_hidden()


@VIEWPORTS
def test_doctor_fee_stays_beside_its_amount(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    sign_in(page, "doctor1")
    open_review(page, PLAIN_REQUEST)
    if page.locator('[data-id="alternative-1"]').count() == 0:
        page.locator('[data-id="another-alternative"]').click()
        page.locator('[data-id="alternative-1"]').wait_for()
    fill_card(page, 1, weekday_ahead(12), "10:00")
    label, amount = _box(page, '[data-id="doctor-fee-text~1"]'), _box(page, '[data-id="doctor-fee~1"]')
    assert abs((label["y"] + label["height"]) - (amount["y"] + amount["height"])) < 8  # one line
    gap = amount["x"] - (label["x"] + label["width"])
    assert 2 <= gap <= 16, gap  # a space apart, not a column apart
    amount_text = page.locator('[data-id="doctor-fee~1"]').inner_text()
    assert amount_text.strip().startswith("€") and "\n" not in amount_text.strip()


def test_the_disclaimer_checkbox_sits_beside_its_label_on_a_phone(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, "doctor1")
    open_review(page, DISCLAIMER_REQUEST)
    box = _box(page, '[data-id="disclaimer-displayed"] input')
    label = _box(page, '[data-id="disclaimer-displayed"] label')
    assert label["y"] <= box["y"] + box["height"] / 2 <= label["y"] + label["height"]
    assert 0 <= label["x"] - (box["x"] + box["width"]) <= 16


@pytest.mark.parametrize("username", ["support1", "doctor1"])
def test_the_top_bar_is_one_row_with_log_out_whole_on_a_phone(server, new_page, username):
    page = new_page(server.url, viewport=MOBILE)
    sign_in(page, username)
    logout, brand = _box(page, "#logout"), _box(page, "#brand")
    assert abs((logout["y"] + logout["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 6
    assert logout["height"] < 48  # "Log out" on one line
    assert logout["x"] + logout["width"] <= MOBILE["width"]
    assert page.get_by_role("link", name="doctordesk").count() >= 1  # the brand keeps its name for screen readers


@VIEWPORTS
def test_toasts_leave_the_banners_dismiss_free(server, new_page, viewport):
    page = new_page(server.url, viewport=viewport)
    sign_in(page, "doctor1")
    page.evaluate(
        """() => {
            const shell = window.doctordesk.shell;
            shell.main.showBanner("Something went wrong. Please try again.");
            shell.notify({ text: "The appointment was approved and the patient told.", level: "info" });
            shell.notify({ text: "A second notice arriving at once.", level: "info" });
        }"""
    )
    dismiss = _box(page, "#main-screen .banner-dismiss")
    for toast in page.locator(".toast").all():
        box = toast.bounding_box()
        assert box is not None and not _overlap(box, dismiss)
    page.locator("#main-screen .banner-dismiss").click()  # not intercepted by a toast
    assert page.locator("#main-screen .screen-banner").is_hidden()


def test_the_desktop_chat_uses_the_panels_height(server, new_page):
    page = new_page(server.url, viewport={"width": 1366, "height": 800})
    sign_in(page, "doctor1")
    page.locator(f'[data-id="chat-{PLAIN_REQUEST}"]').click()
    page.locator("#panel .scroller").wait_for()
    log = _box(page, "#panel .scroller")
    assert log["height"] > 360
    send = _box(page, '#panel [data-id="send"]')
    assert send["y"] + send["height"] <= 800  # the composer stays on screen


def test_a_new_tab_on_a_deep_url_joins_the_browsers_session(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    tab = page.context.new_page()
    tab.goto(f"{server.url}/#/profile/appointments/{PLAIN_REQUEST}/approve")
    tab.locator('[data-id="approve"]').wait_for()
    assert tab.locator("#login").is_hidden()
    # Each signed-in tab holds the shared lock a new tab looks for before it waits for the others' answer.
    assert _signed_in_holders(page) == 2
    # With no signed-in tab left, a new tab asks to sign in, without waiting for answers (no tab holds the lock).
    page.get_by_role("button", name="Log out").click()
    page.locator("#login").wait_for()
    tab.locator("#login").wait_for()  # the logout ended the shared token there too
    page.wait_for_function(SIGNED_IN_HOLDERS + ".then((n) => n === 0)")
    fresh = page.context.new_page()
    fresh.goto(f"{server.url}/#/profile/appointments")
    fresh.locator("#login").wait_for()


SIGNED_IN_HOLDERS = (
    "navigator.locks.query().then((s) => s.held.filter((lock) => lock.name === 'doctordesk.signed-in').length)"
)


def _signed_in_holders(page: Any) -> int:
    page.wait_for_function(SIGNED_IN_HOLDERS + ".then((n) => n > 0)")
    return int(page.evaluate(SIGNED_IN_HOLDERS))


def test_a_bad_card_left_on_the_phone_is_shown_on_the_desktop_as_restored_and_discarded_there(server, new_page):
    phone = new_page(server.url, viewport=MOBILE)
    sign_in(phone, "doctor1")
    open_review(phone, PLAIN_REQUEST)
    if phone.locator('[data-id="alternative-1"]').count() == 0:
        phone.locator('[data-id="another-alternative"]').click()
        phone.locator('[data-id="alternative-1"]').wait_for()
    date = phone.locator('[data-name="date~1"]')
    date.fill("2020-01-06")  # in the past: the card can never be sent
    date.dispatch_event("change")
    phone.locator('[data-id="alternative-1"] .msg-error').first.wait_for()

    desktop = new_page(server.url)
    sign_in(desktop, "doctor1")
    open_review(desktop, PLAIN_REQUEST)
    note = desktop.locator('[data-id="draft-note"]')
    note.wait_for()
    assert "Restored your unsent changes from" in note.inner_text()
    assert desktop.locator('[data-id="approve"]').is_disabled()
    note.get_by_role("button", name="Discard changes").click()
    desktop.locator('[data-id="alternative-1"]').wait_for(state="detached")
    desktop.locator('[data-id="approve"]:not([disabled])').wait_for()
    assert note.is_hidden()
    # The phone follows (stream or poll): the bad card is gone there too.
    phone.locator('[data-id="alternative-1"]').wait_for(state="detached", timeout=30_000)
