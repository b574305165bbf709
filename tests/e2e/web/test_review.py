"""Review and Approve in the browser: approving, suggesting alternatives (fees, red highlights, delete), the
decline modal's required reason, a canceled appointment's disabled actions, and deciding what another session
decided meanwhile (APPOINTMENT_CHANGED). Each test decides a different demo appointment (ids in seeding order)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.e2e.web.conftest import decide_elsewhere, sign_in
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

PLAIN_REQUEST = 1  # patient1, Berlin, in two weekdays
MUNICH_REQUEST = 3
PATIENT1_LATER = 6  # patient1 again, with a prescription need
CANCELED = 13


def weekday_ahead(days: int) -> str:
    day = MONDAY_MORNING.date() + timedelta(days=days)  # the module server's today
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day.isoformat()


def open_review(page, appointment: int) -> None:
    page.locator(f'[data-id="review-{appointment}"]').click()
    page.locator('[data-id="approve"]').wait_for()


def test_approving_closes_the_screen_and_the_list_shows_the_new_status(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, PLAIN_REQUEST)
    assert page.get_by_role("heading", name="Review and approve").is_visible()
    page.locator('[data-id="approve"]').click()
    page.locator('[data-id="needs-decision"]').wait_for()
    status = page.locator(f'[data-id="status-{PLAIN_REQUEST}"]')
    assert status.text_content() == "Approved"
    assert page.locator(f'[data-id="upcoming"] [data-id="appointment-{PLAIN_REQUEST}"]').count() == 1


def fill_card(page, n: int, day: str, at: str) -> None:
    card = page.locator(f'[data-id="alternative-{n}"]')
    card.locator(f'[data-name="date~{n}"]').fill(day)
    card.locator(f'[data-name="date~{n}"]').dispatch_event("change")
    page.locator(f'[data-id="date~{n}"].is-highlighted').wait_for()
    card.locator(f'[data-name="time~{n}"]').fill(at)
    card.locator(f'[data-name="time~{n}"]').dispatch_event("change")
    page.locator(f'[data-id="doctor-fee~{n}"]:not([hidden])').wait_for()


def test_two_alternatives_show_fees_and_red_highlights_and_the_second_can_be_deleted(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, PATIENT1_LATER)
    page.locator('[data-id="another-alternative"]').click()
    page.locator('[data-id="alternative-1"]').wait_for()
    fill_card(page, 1, weekday_ahead(12), "10:00")
    page.locator('[data-id="another-alternative"]').click()
    page.locator('[data-id="alternative-2"]').wait_for()
    fill_card(page, 2, weekday_ahead(13), "11:30")
    for n in (1, 2):
        card = page.locator(f'[data-id="alternative-{n}"]')
        assert card.locator(f'[data-id="date~{n}"]').get_attribute("class").count("is-highlighted")
        style = card.locator(f'[data-name="date~{n}"]').evaluate(
            "e => { const s = getComputedStyle(e); "
            "return [s.color, s.boxShadow, s.borderTopColor, s.backgroundColor]; }"
        )
        color, bar, border, fill = style
        assert "rgb(200, 30, 30)" in bar  # changed: a red bar (the value keeps its usual colour)
        assert color != "rgb(200, 30, 30)"
        assert border != "rgb(200, 30, 30)" and fill != "rgb(255, 240, 240)"  # not the error's frame and fill
        label = card.locator(f'[data-id="date~{n}"] .field-label')
        tag = label.evaluate(
            "e => { const s = getComputedStyle(e, '::after'); return [s.content, s.backgroundColor, s.color]; }"
        )
        assert tag == ['"changed"', "rgb(253, 236, 236)", "rgb(143, 20, 20)"]  # a red "changed" tag
        assert card.locator(f'[data-id="doctor-fee~{n}"]').text_content().strip()
        assert card.locator(f'[data-id="fee-text~{n}"]').is_visible()
    assert page.locator('[data-id="delete~1"]').count() == 0  # the only-one rule: no delete on card 1
    page.locator('[data-id="approve"]:not([disabled])').wait_for()
    page.locator('[data-id="delete~2"]').click()
    page.locator('[data-id="alternative-2"]').wait_for(state="detached")
    assert page.locator('[data-id="alternative-1"]').is_visible()


def test_declining_without_a_reason_is_refused_and_the_reason_field_is_marked(server, new_page, problems):
    problems.allowed.append("422")
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, MUNICH_REQUEST)
    page.locator('[data-id="decline"]').click()
    dialog = page.get_by_role("dialog", name="Decline the request")
    dialog.wait_for()
    dialog.get_by_role("button", name="Decline").click()
    reason = dialog.get_by_label("Reason")
    page.locator('[data-id="reason"] .msg-error').wait_for()
    assert reason.get_attribute("aria-invalid") == "true"
    frame = reason.evaluate("e => [getComputedStyle(e).borderTopColor, getComputedStyle(e).backgroundColor]")
    assert frame == ["rgb(200, 30, 30)", "rgb(255, 240, 240)"]  # an error: red frame and fill, unlike a change
    assert dialog.is_visible()
    # Still undecided.
    page.keyboard.press("Escape")
    page.locator('[data-id="cancel"]').click()
    page.locator(f'[data-id="needs-decision"] [data-id="appointment-{MUNICH_REQUEST}"]').wait_for()


def test_a_canceled_appointment_has_approve_suggest_and_decline_disabled(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    assert page.locator(f'[data-id="status-{CANCELED}"]').text_content() == "Canceled"
    open_review(page, CANCELED)
    for ref in ("approve", "decline"):
        assert page.locator(f'[data-id="{ref}"]').is_disabled()
    assert page.locator('[data-id="another-alternative"]').is_disabled()
    assert page.locator('[data-id="alternative-1"]').count() == 0


DISCLAIMER_REQUEST = 2  # patient4; the disclaimer must be shown and acknowledged


def test_approve_waits_for_the_disclaimer_acknowledgement(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, DISCLAIMER_REQUEST)
    approve = page.locator('[data-id="approve"]')
    assert approve.is_disabled()
    page.get_by_label("I have displayed the disclaimer to the patient").check()
    page.locator('[data-id="approve"]:not([disabled])').wait_for()
    approve.click()
    page.locator(f'[data-id="status-{DISCLAIMER_REQUEST}"][data-value="Approved"]').wait_for()


APPROVED_ELSEWHERE = 15  # doctor2's, patient1 in Munich
DECLINED_ELSEWHERE = 17  # doctor2's, patient5 in Munich


def block_the_stream(page) -> None:
    """Without the stream an open screen learns of a change only at its next poll (every 20 s): time enough for the
    doctor to act on what the page showed when it was loaded."""
    page.route("**/profile/stream?*", lambda route: route.abort())


def test_approving_what_was_decided_elsewhere_says_why_and_shows_the_appointment_as_it_is_now(
    server, new_page, problems
):
    problems.allowed.extend(["409", "net::", "Failed to load resource"])
    page = new_page(server.url)
    block_the_stream(page)
    sign_in(page, "doctor2")
    open_review(page, APPROVED_ELSEWHERE)
    held: list = []  # the reload's PUT, held until the stale page has been checked
    page.route(
        f"**/profile/appointments/{APPROVED_ELSEWHERE}/approve",
        lambda route: held.append(route) if route.request.method == "PUT" else route.continue_(),
    )
    decide_elsewhere(server.url, APPROVED_ELSEWHERE, "approve", username="doctor2")

    page.locator('[data-id="approve"]').click()
    banner = page.locator("#main-screen .screen-banner")
    banner.wait_for()
    assert "The appointment has changed." in banner.text_content()
    for _ in range(200):
        if held:
            break
        page.wait_for_timeout(50)
    assert held
    # While the screen loads again, the stale page offers nothing to submit.
    assert page.locator('[data-id="approve"]').is_disabled()
    held[0].continue_()

    page.locator('[data-id="status"][data-value="Approved"]').wait_for()
    assert "loaded again and shows the current state" in banner.text_content()
    for ref in ("approve", "decline", "another-alternative"):
        assert page.locator(f'[data-id="{ref}"]').is_disabled(), ref
    assert page.locator('[data-id="status-note"]').is_visible()
    assert page.evaluate("document.activeElement.classList.contains('screen-banner')")


def test_declining_what_was_decided_elsewhere_closes_the_dialog_and_the_message_stays_with_that_screen(
    server, new_page, problems
):
    problems.allowed.extend(["409", "net::", "Failed to load resource"])
    page = new_page(server.url)
    block_the_stream(page)
    sign_in(page, "doctor2")
    open_review(page, DECLINED_ELSEWHERE)
    page.locator('[data-id="decline"]').click()
    dialog = page.get_by_role("dialog", name="Decline the request")
    dialog.get_by_label("Reason").fill("The patient asked to postpone.")
    decide_elsewhere(server.url, DECLINED_ELSEWHERE, "decline", username="doctor2")

    dialog.get_by_role("button", name="Decline").click()
    page.locator('[data-id="status"][data-value="Declined"]').wait_for()
    banner = page.locator("#main-screen .screen-banner")
    assert "The appointment has changed." in banner.text_content()
    assert not dialog.is_visible()
    assert page.locator('[data-id="decline"]').is_disabled()

    page.locator("#back").click()
    page.locator(f'[data-id="status-{DECLINED_ELSEWHERE}"][data-value="Declined"]').wait_for()
    assert banner.is_hidden()  # the list shows no message about another screen


def test_escape_closes_the_decline_dialog_for_good_and_focus_returns_to_decline(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, MUNICH_REQUEST)
    page.locator('[data-id="decline"]').click()
    dialog = page.get_by_role("dialog", name="Decline the request")
    dialog.wait_for()
    with page.expect_response(lambda r: r.url.endswith("/decline-dialog/close")) as closed:
        page.keyboard.press("Escape")
    assert closed.value.status == 200
    dialog.wait_for(state="hidden")
    page.wait_for_function("() => document.activeElement && document.activeElement.closest('[data-id=\"decline\"]')")
    # A new visit (another tab, or after a reload) does not bring the dialog back.
    again = new_page(server.url)
    sign_in(again, "doctor1")
    open_review(again, MUNICH_REQUEST)
    again.wait_for_timeout(300)
    assert again.get_by_role("dialog", name="Decline the request").is_hidden()


def test_a_cards_prescription_warning_is_shown_as_text_and_the_card_keeps_its_layout(server, new_page):
    page = new_page(server.url)
    sign_in(page, "doctor1")
    open_review(page, PATIENT1_LATER)
    page.locator('[data-id="another-alternative"]').click()
    card = page.locator('[data-id="alternative-1"]')
    card.wait_for()
    card.locator('[data-name="profile~1"]').select_option(label="Dr. Mei Chen")
    note = page.locator('[data-id="prescription-info~1"]')
    note.wait_for()
    assert note.locator("button").count() == 0  # not a control that does nothing
    warning = note.locator(".msg-warning")
    assert warning.is_visible() and "prescri" in (warning.text_content() or "").lower()
    date_box = card.locator('[data-name="date~1"]').bounding_box()
    time_box = card.locator('[data-name="time~1"]').bounding_box()
    assert date_box and time_box and abs(date_box["y"] - time_box["y"]) < 5  # Date and Time side by side
