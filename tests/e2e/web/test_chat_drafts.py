"""Chat drafts and the message limit in the browser: an unsent message survives a
reload and follows the user to another device, a send removes it; near the 4,000-character limit a counter shows,
and a paste that does not fit says what was left out, in English and German."""

from __future__ import annotations

import pytest

from tests.e2e.web.conftest import MOBILE, sign_in
from tests.e2e.web.test_language import german_sign_in

pytestmark = pytest.mark.browser

DRAFTS, LIMIT_EN, LIMIT_DE = 7, 9, 10  # doctor1's appointments with chat enabled, one per test
BOX = '[data-id="content"] textarea'


def open_chat(page, appointment: int) -> None:
    page.evaluate(f"location.hash = '#/profile/messages/user-chat?appointment-id={appointment}'")
    page.locator(BOX).wait_for()


def type_and_wait_for_the_save(page, text: str, *, appointment: int = DRAFTS, box: str = BOX) -> None:
    """Types ``text`` into the message box and waits until the service keeps all of it as the draft."""
    with page.expect_response(lambda r: "/profile/messages/draft" in r.url and r.request.method == "PUT") as saved:
        page.locator(box).press_sequentially(text)
    assert saved.value.status == 200
    # The last keystrokes may have come after the save that answered: wait until the kept text is the whole text.
    page.wait_for_function(
        """async ([appointment, text]) => {
            const session = JSON.parse(sessionStorage.getItem("doctordesk.session"));
            const r = await fetch(`/profile/messages/draft?appointment-id=${appointment}`,
                {headers: {Authorization: `Bearer ${session.token}`}});
            return (await r.json()).content === text;
        }""",
        arg=[appointment, text],
    )


def test_an_unsent_message_survives_a_reload_follows_the_user_and_goes_with_the_send(server, new_page):
    laptop = new_page(server.url)
    sign_in(laptop, "doctor1")
    open_chat(laptop, DRAFTS)
    text = "Could you check the <b>policy</b> dates"
    type_and_wait_for_the_save(laptop, text)
    laptop.reload()
    laptop.locator(BOX).wait_for()
    laptop.wait_for_function(f"() => document.querySelector('{BOX}').value.length > 0")
    assert laptop.locator(BOX).input_value() == text
    assert laptop.locator('[data-id="send"] button, [data-id="send"]').first.is_enabled()
    # Another device of the same doctor (a phone): the draft is there too.
    phone = new_page(server.url, viewport=MOBILE)
    sign_in(phone, "doctor1")
    open_chat(phone, DRAFTS)
    phone.wait_for_function(f"() => document.querySelector('{BOX}').value.length > 0")
    assert phone.locator(BOX).input_value() == text
    phone.locator('[data-id="send"]').click()
    phone.locator('[data-ref^="outgoing-"] .group-text', has_text="policy").last.wait_for()
    assert phone.locator(BOX).input_value() == ""
    # Sent: the laptop opens the chat again with an empty box (the message is in the thread).
    laptop.reload()
    laptop.locator('[data-ref^="outgoing-"] .group-text', has_text="policy").last.wait_for()
    assert laptop.locator(BOX).input_value() == ""


@pytest.mark.parametrize(
    ("appointment", "german", "counter", "cut"),
    [
        (LIMIT_EN, False, "4,000 of 4,000 characters", "the last 1,000 characters of the pasted text were left out"),
        (LIMIT_DE, True, "4.000 von 4.000 Zeichen", "Die letzten 1.000 Zeichen des eingefügten Textes"),
    ],
    ids=["en", "de"],
)
def test_a_long_paste_is_cut_with_a_word_and_the_counter_shows_near_the_limit(
    server, new_page, appointment, german, counter, cut
):
    page = new_page(server.url, locale="de-DE" if german else None)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    (german_sign_in if german else sign_in)(page, "doctor1")
    open_chat(page, appointment)
    count = page.locator('[data-id="content"] .char-count')
    page.locator(BOX).fill("x" * 3000)
    assert not count.is_visible()  # far from the limit: no counter
    page.locator(BOX).fill("")
    pasted = "a" * 4000 + "THE CUT STARTS HERE" + "b" * 981
    assert len(pasted) == 5000
    page.evaluate("text => navigator.clipboard.writeText(text)", pasted)
    page.locator(BOX).focus()
    page.keyboard.press("Control+V")
    page.wait_for_function(f"() => document.querySelector('{BOX}').value.length === 4000")
    message = page.locator('[data-id="content"] .char-cut')
    message.wait_for()
    assert cut in (message.text_content() or "")
    assert "THE CUT STARTS HEREbbb" in (message.text_content() or "")  # where the cut begins
    assert page.locator(BOX).input_value() == "a" * 4000
    assert count.is_visible() and (count.text_content() or "") == counter
