"""A file the chat refuses, in the browser (docs/chat.md#a-refused-file): the reason is shown next to the file
control in the page's language, the composer (message box, "Attach a file", Send) stays on screen with no banner
pushing it away, and nothing typed is lost. On the desktop's panel and on a phone, in English and in German."""

from __future__ import annotations

import pytest

from tests.e2e.web.conftest import MOBILE, axe_violations, sign_in
from tests.e2e.web.test_language import german_sign_in
from tests.support.live import serving
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
# doctor1's appointments with chat enabled, one per case.
CHATS = {"desktop-en": 7, "phone-de": 11, "desktop-de": 12, "phone-en": 9}

WORDS = {
    "en": {
        "type": "x.exe is not a file type that can be sent.",
        "size": "huge.png is larger than",
        "damaged": "The PDF could not be read: it is damaged or not a PDF.",
        "attach": "Attach a file",
        "send": "Send",
    },
    "de": {
        "type": "x.exe hat keinen Dateityp, der gesendet werden kann.",
        "size": "huge.png ist größer als",
        "damaged": "Das PDF konnte nicht gelesen werden: Es ist beschädigt oder kein PDF.",
        "attach": "Datei anhängen",
        "send": "Senden",
    },
}


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory):
    with serving(tmp_path_factory.mktemp("web-composer"), at=MONDAY_MORNING) as live:
        yield live


def _on_screen(page, selector: str, viewport: dict[str, int]) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"]


def _upload_messages(page) -> list[str]:
    return [t.strip() for t in page.locator('[data-id="upload"] .msg-error').all_text_contents()]


@pytest.mark.parametrize("case", list(CHATS))
def test_a_refused_file_is_explained_at_the_file_control_and_the_composer_stays_with_the_text(
    chat_server, new_page, problems, tmp_path, case
):
    problems.allowed.append("422")
    layout, language = case.split("-")
    viewport = DESKTOP if layout == "desktop" else MOBILE
    words = WORDS[language]
    page = new_page(chat_server.url, viewport=viewport, locale="de-DE" if language == "de" else "en-GB")
    if language == "de":
        german_sign_in(page, "doctor1")
    else:
        sign_in(page, "doctor1")
    page.locator(f'[data-id="chat-{CHATS[case]}"]').click()
    box = page.locator('[data-id="content"] textarea')
    box.wait_for()
    box.fill("Half a sentence about the results")

    # Refused in the browser, before anything is sent: not a type the chat takes, or too large.
    exe = tmp_path / "x.exe"
    exe.write_bytes(b"MZ\x90\x00")
    upload = page.locator('[data-id="upload"] input[type="file"]')
    upload.set_input_files(str(exe))
    assert _upload_messages(page) == [words["type"]]
    huge = tmp_path / "huge.png"
    huge.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * (11 * 1024 * 1024))
    upload.set_input_files(str(huge))
    (said,) = _upload_messages(page)
    assert said.startswith(words["size"]) and said.endswith(" MB.")
    assert ("10,0 MB" in said) if language == "de" else ("10.0 MB" in said), said

    # Refused by the service: a damaged PDF, its reason placed on the file control, no banner.
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(b"%PDF-1.7\nnot really a PDF\n%%EOF\n")
    upload.set_input_files(str(damaged))
    page.locator('[data-id="send"]').click()
    page.locator('[data-id="upload"] .msg-error', has_text=words["damaged"]).wait_for()
    assert _upload_messages(page) == [words["damaged"]]
    assert page.locator(".screen-banner:visible").count() == 0
    assert box.input_value() == "Half a sentence about the results"  # nothing typed is lost
    assert page.locator(".draft-name").all_text_contents() == ["damaged.pdf"]  # the file to replace or remove
    attach = page.locator('[data-id="upload"] label', has_text=words["attach"])
    send = page.locator('[data-id="send"]')
    assert send.inner_text().strip() == words["send"]
    for selector in ('[data-id="content"] textarea', '[data-id="upload"] label', '[data-id="send"]'):
        assert _on_screen(page, selector, viewport), selector
    assert attach.is_visible() and send.is_enabled()
    assert axe_violations(page) == []  # the field in error is described by its message
