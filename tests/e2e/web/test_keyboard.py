"""Keyboard only: signing in, approving, suggesting an alternative, declining and sending a chat message with keys
alone (Tab, typing, Enter, Space, Escape); no mouse click anywhere. Focus is placed on a list's link the way Tab
would reach it (``focus()``), since tabbing through a whole list says nothing more."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

APPROVED, SUGGESTED, DECLINED, CHAT = 1, 6, 3, 7


def weekday_ahead(days: int) -> date:
    day = MONDAY_MORNING.date() + timedelta(days=days)  # the module server's today
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def keyboard_sign_in(page, username: str) -> None:
    page.goto("/")
    page.get_by_role("heading", name="Sign in").wait_for()
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'login-username'")
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type("demo")
    page.keyboard.press("Enter")
    page.locator('[data-id="title"]').wait_for()


def focused(page) -> str:
    return page.evaluate("() => (document.activeElement.closest('[data-id]') || {dataset: {}}).dataset.id || ''")


def open_review(page, appointment: int) -> None:
    page.locator(f'[data-id="review-{appointment}"]').focus()
    page.keyboard.press("Enter")
    page.locator('[data-id="approve"]').wait_for()


def type_date(page, name: str, day: date) -> None:
    """Type a day the clinic's way (docs/web-app.md#dates-in-forms: day, month, year in the page's English) into the
    focused field, then Tab on, which commits it (the field's change)."""
    control = page.locator(f'[data-name="{name}"]')
    page.keyboard.type(day.strftime("%d/%m/%Y"))
    expect_value(control, day.strftime("%d/%m/%Y"))
    page.keyboard.press("Tab")


def expect_value(control, value: str) -> None:
    from playwright.sync_api import expect

    expect(control).to_have_value(value)


def tab_to(page, element_id: str, *, limit: int = 60) -> None:
    """Press Tab until the element with ``element_id`` (or a control inside it) has focus."""
    for _ in range(limit):
        if focused(page) == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {element_id}; focus is on {focused(page)!r}")


@pytest.fixture
def gb_page(server, new_page):
    """British English (days and times are the clinic's in any locale: a day in its format, a time on the 24-hour
    clock)."""
    return new_page(server.url, locale="en-GB")


def test_signing_in_with_the_keyboard_alone(gb_page):
    keyboard_sign_in(gb_page, "doctor1")
    assert gb_page.get_by_role("heading", name="Appointments", level=1).is_visible()


def test_approving_with_the_keyboard_alone(gb_page):
    page = gb_page
    keyboard_sign_in(page, "doctor1")
    open_review(page, APPROVED)
    tab_to(page, "approve")
    page.keyboard.press("Enter")
    page.locator(f'[data-id="status-{APPROVED}"]', has_text="Approved").wait_for()


def test_suggesting_an_alternative_with_the_keyboard_alone(gb_page):
    page = gb_page
    keyboard_sign_in(page, "doctor1")
    open_review(page, SUGGESTED)
    tab_to(page, "another-alternative")
    page.keyboard.press("Enter")
    page.locator('[data-id="alternative-1"]').wait_for()
    tab_to(page, "date~1")
    type_date(page, "date~1", weekday_ahead(12))
    page.locator('[data-id="date~1"].is-highlighted').wait_for()
    tab_to(page, "time~1")
    page.keyboard.type("1000")  # a time on the 24-hour clock; no colon needed
    page.keyboard.press("Tab")  # commits it (the field's change), as for a day
    page.locator('[data-id="doctor-fee~1"]:not([hidden])').wait_for()
    page.locator('[data-id="approve"]:not([disabled])').wait_for()
    tab_to(page, "approve")
    page.keyboard.press("Enter")
    page.locator(f'[data-id="status-{SUGGESTED}"]', has_text="Alternatives offered").wait_for()


def test_declining_with_the_keyboard_alone(gb_page):
    page = gb_page
    keyboard_sign_in(page, "doctor1")
    open_review(page, DECLINED)
    tab_to(page, "decline")
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Decline the request")
    dialog.wait_for()
    tab_to(page, "reason")
    page.keyboard.type("The practice is closed that week.")
    tab_to(page, "decline-submit")
    page.keyboard.press("Enter")
    page.locator(f'[data-id="status-{DECLINED}"]', has_text="Declined").wait_for()


def test_sending_a_chat_message_with_the_keyboard_alone(gb_page):
    page = gb_page
    keyboard_sign_in(page, "doctor1")
    page.locator(f'[data-id="chat-{CHAT}"]').focus()
    page.keyboard.press("Enter")
    page.locator('[data-id="content"] textarea').wait_for()
    tab_to(page, "content")
    page.keyboard.type("Typed without a mouse.")
    tab_to(page, "send")
    page.keyboard.press("Enter")
    page.locator('[data-kind="outgoing"]', has_text="Typed without a mouse.").wait_for()
    assert page.locator('[data-id="content"] textarea').input_value() == ""
