"""Chat in the browser: two people in two browser contexts, markup in messages, load more, attachments, the send
control, a message sent while offline, and the layouts (desktop panel, mobile full screen)."""

from __future__ import annotations

import struct
import time
import zlib

import httpx
import pytest

from doctordesk.store.seed import sample_files
from tests.e2e.web.conftest import MOBILE, sign_in
from tests.support.live import serving
from tests.support.moments import MONDAY_MORNING

pytestmark = pytest.mark.browser

# doctor1's appointments with chat enabled, one per test (ids in seeding order).
TWO_PEOPLE, XSS, LOAD_MORE, ATTACHMENTS, SEND_CONTROL, MOBILE_CHAT, RESET = 7, 9, 10, 11, 12, 1, 14
PAGE_SIZE = 5


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory):
    """Five messages per chat page, so load more shows up after a few messages."""
    with serving(
        tmp_path_factory.mktemp("web-chat"), at=MONDAY_MORNING, DOCTORDESK_CHAT_PAGE_SIZE=str(PAGE_SIZE)
    ) as live:
        yield live


def png(width: int = 24, height: int = 16) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([15, 118, 110]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# A real one-page PDF: uploads are read by a PDF parser, and a page-less stub is refused as unreadable.
PDF = sample_files.pdf("Report")


def open_chat_from_list(page, appointment: int) -> None:
    page.locator(f'[data-id="chat-{appointment}"]').click()
    page.locator('[data-id="content"] textarea').wait_for()


def open_chat_directly(page, appointment: int) -> None:
    page.evaluate(f"location.hash = '#/profile/messages/user-chat?appointment-id={appointment}'")
    page.locator('[data-id="content"] textarea').wait_for()


def send(page, text: str) -> None:
    page.locator('[data-id="content"] textarea').fill(text)
    page.locator('[data-id="send"]').click()
    page.locator('[data-ref^="outgoing-"] .group-text', has_text=text).last.wait_for()


def send_via_api(base_url: str, appointment: int, texts: list[str], username: str = "support1") -> None:
    with httpx.Client(base_url=base_url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": username, "password": "demo"}).json()["access_token"]
        for text in texts:
            response = http.post(
                "/profile/messages/send-message",
                data={"content": text, "appointment-id": str(appointment)},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code == 200, response.text


def test_a_doctor_and_a_support_agent_see_each_others_messages_within_a_second(chat_server, new_page):
    doctor = new_page(chat_server.url)
    support = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    sign_in(support, "support1")
    open_chat_from_list(doctor, TWO_PEOPLE)
    assert doctor.locator("#panel").is_visible()  # desktop: a panel beside or over the list
    open_chat_directly(support, TWO_PEOPLE)
    for page in (doctor, support):
        page.locator('#connection[data-status="live"]').wait_for()
    send(support, "Hello Dr. Berger, the patient asked about parking.")
    started = time.monotonic()
    doctor.locator('[data-ref^="incoming-"] .group-text', has_text="asked about parking").wait_for(timeout=1000)
    assert time.monotonic() - started < 1.0
    send(doctor, "Thanks, I will let them know.")
    started = time.monotonic()
    support.locator('[data-ref^="incoming-"] .group-text', has_text="let them know").wait_for(timeout=1000)
    assert time.monotonic() - started < 1.0
    assert doctor.url.endswith("#/profile/appointments")  # no reload, no navigation


def test_markup_in_chat_messages_renders_as_text_and_never_runs(chat_server, new_page):
    doctor = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, XSS)
    doctor.evaluate("window.__xss = 0")
    payloads = ["<script>window.__xss = 1</script>", '<img src=x onerror="window.__xss = 2">']
    for payload in payloads:
        send(doctor, payload)
    send_via_api(chat_server.url, XSS, ['<svg onload="window.__xss = 3"></svg>'])
    doctor.locator('[data-ref^="incoming-"] .group-text', has_text="<svg onload").wait_for(timeout=5000)
    texts = doctor.locator(".group-text").all_text_contents()
    for payload in payloads:
        assert payload in texts
    assert doctor.evaluate("window.__xss") == 0
    assert doctor.locator(".group img, .group script, .group svg").count() == 0


def test_load_more_prepends_older_messages_and_keeps_the_scroll_position(chat_server, new_page):
    send_via_api(chat_server.url, LOAD_MORE, [f"Message number {i}" for i in range(1, 12)])
    doctor = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, LOAD_MORE)
    scroller = doctor.locator("#panel .scroller")
    load_more = doctor.locator('[data-id="load-more"]')
    load_more.wait_for()
    assert doctor.locator(".group-text").get_by_text("Message number 1", exact=True).count() == 0
    scroller.evaluate("s => { s.scrollTop = 0; }")
    anchor = doctor.locator(".group-text").get_by_text("Message number 7", exact=True)

    def offset() -> float:
        return anchor.evaluate(
            "e => e.getBoundingClientRect().top - e.closest('.scroller').getBoundingClientRect().top"
        )

    before = offset()
    load_more.click()
    doctor.locator(".group-text").get_by_text("Message number 6", exact=True).wait_for()
    assert abs(offset() - before) <= 2
    assert scroller.evaluate("s => s.scrollTop") > 0


def test_sending_and_viewing_attachments_one_draft_file_at_a_time(chat_server, new_page, tmp_path):
    image = tmp_path / "xray.png"
    image.write_bytes(png())
    first = tmp_path / "first.pdf"
    first.write_bytes(PDF)
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    doctor = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, ATTACHMENTS)
    upload = doctor.locator('[data-id="upload"] input[type="file"]')
    upload.set_input_files(str(first))
    doctor.locator(".draft-name", has_text="first.pdf").wait_for()
    upload.set_input_files(str(report))  # a second file replaces the draft
    assert doctor.locator(".draft-name").all_text_contents() == ["report.pdf"]
    send(doctor, "The report, as discussed.")
    doctor.locator(".draft").wait_for(state="hidden")
    upload.set_input_files(str(image))
    send(doctor, "And the image.")
    img = doctor.locator('[data-ref^="outgoing-"] img[alt="xray.png"]')
    img.wait_for()
    doctor.wait_for_function(
        "() => { const i = document.querySelector('img[alt=\"xray.png\"]');"
        " return i && i.complete && i.naturalWidth === 24; }"
    )
    assert img.get_attribute("src").startswith("blob:")
    with doctor.expect_download() as download:
        doctor.get_by_role("button", name="Download report.pdf").click()
    assert download.value.suggested_filename == "report.pdf"
    assert download.value.path().read_bytes() == PDF


def test_send_stays_disabled_while_empty_and_a_message_sent_offline_goes_once_when_back(chat_server, new_page):
    doctor = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, SEND_CONTROL)
    doctor.locator('#connection[data-status="live"]').wait_for()
    send_button = doctor.locator('[data-id="send"]')
    assert send_button.is_disabled()
    box = doctor.locator('[data-id="content"] textarea')
    box.fill("   ")
    assert send_button.is_disabled()
    box.fill("Is the patient fasting?")
    assert send_button.is_enabled()
    box.fill("")
    assert send_button.is_disabled()

    # Offline: the indicator stops saying "Live" at once, not when a request fails.
    doctor.context.set_offline(True)
    doctor.locator('#connection[data-status="offline"]').wait_for(timeout=2_000)
    assert doctor.locator("#connection").text_content().strip() == "Offline"
    text = "Sent while the connection was gone"
    box.fill(text)
    send_button.click()
    banner = doctor.locator(".banner, [role=alert], [data-tone=info]", has_text="Not sent yet: no connection")
    banner.first.wait_for()
    assert box.input_value() == text  # kept where it was typed
    outgoing = doctor.locator('[data-ref^="outgoing-"] .group-text', has_text=text)
    assert outgoing.count() == 0
    # Back online: it goes by itself, once (the same client message id on every try), and the app says so.
    doctor.context.set_offline(False)
    outgoing.first.wait_for()
    doctor.locator(".toast", has_text="Sent now that the connection is back.").wait_for()
    doctor.locator('#connection[data-status="live"]').wait_for()
    assert outgoing.count() == 1
    assert box.input_value() == ""
    assert not banner.first.is_visible()


def test_on_a_phone_the_chat_takes_the_whole_screen_and_back_returns_to_the_list(chat_server, new_page):
    doctor = new_page(chat_server.url, viewport=MOBILE)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, MOBILE_CHAT)
    assert doctor.locator("#panel").is_hidden()
    assert doctor.locator('#main-screen[data-screen="chat"]').is_visible()
    tag = doctor.locator('[data-id="tag"]')
    assert tag.locator(".regular-label").text_content() == f"Appointment #{MOBILE_CHAT}"  # the spec's id
    assert (tag.locator(".regular-value").text_content() or "").startswith("Maria Schmidt, ")  # whom, when
    assert doctor.locator('[data-id="close"]').count() == 0  # desktop-only element
    assert doctor.evaluate("document.documentElement.scrollWidth") <= MOBILE["width"]
    doctor.get_by_role("button", name="Back to the appointments").click()
    doctor.locator('[data-id="needs-decision"]').wait_for()


# The page the panel shows is one the server does not know (as after a restart, on another instance, or once its
# page cache let it go): the state token keeps the chat's suffix but names no page, so the poll answers a reset.
POLL_WITH_AN_UNKNOWN_PAGE = """
async () => {
  const panel = window.doctordesk.shell.panel;
  const before = panel.body.querySelector('[data-id="content"]');
  panel.state = panel.state.replace(/^[^~]*/, "0.0.0.unknown");
  await panel.patch(panel.poll);
  return !before.isConnected;
}
"""


def test_a_reset_answer_or_a_reload_keeps_the_message_being_typed_its_file_and_the_focus(
    chat_server, new_page, tmp_path
):
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    doctor = new_page(chat_server.url)
    sign_in(doctor, "doctor1")
    open_chat_from_list(doctor, RESET)
    doctor.locator('[data-id="upload"] input[type="file"]').set_input_files(str(report))
    box = doctor.locator('[data-id="content"] textarea')
    box.fill("The results are in, and")

    assert doctor.evaluate(POLL_WITH_AN_UNKNOWN_PAGE)  # the whole tree was built again

    assert box.input_value() == "The results are in, and"
    assert doctor.locator(".draft-name").all_text_contents() == ["report.pdf"]
    assert doctor.locator('[data-id="send"]').is_enabled()
    doctor.keyboard.type(" they look")  # typing goes on where it was
    # Loading the screen again after a stream gap keeps them the same way.
    doctor.evaluate("window.doctordesk.shell.panel.open(window.doctordesk.shell.panel.page.endpoint, {focus: false})")
    doctor.keyboard.type(" good.")
    assert box.input_value() == "The results are in, and they look good."
    doctor.locator('[data-id="send"]').click()
    sent = doctor.locator('[data-ref^="outgoing-"]', has_text="they look good.")
    sent.locator(".attachment", has_text="report.pdf").wait_for()


PHONE_THREAD = 13  # a chat of its own, filled here


def test_on_a_phone_the_chat_opens_at_the_newest_message_with_the_input_on_screen(chat_server, new_page):
    send_via_api(chat_server.url, PHONE_THREAD, [f"Phone message {i}" for i in range(1, 9)])
    doctor = new_page(chat_server.url, viewport=MOBILE)
    sign_in(doctor, "doctor1")
    open_chat_directly(doctor, PHONE_THREAD)
    doctor.get_by_text("Phone message 8").wait_for()
    log = doctor.locator(".scroller .scroller")
    doctor.wait_for_function(
        "() => { const l = document.querySelector('.scroller .scroller');"
        " return l && l.scrollHeight - l.scrollTop - l.clientHeight < 4 && l.scrollHeight > l.clientHeight; }"
    )
    newest = doctor.get_by_text("Phone message 8").bounding_box()
    box = doctor.locator('[data-id="content"] textarea').bounding_box()
    assert newest and box and 0 <= newest["y"] < MOBILE["height"]  # the newest message is in view
    assert box["y"] + box["height"] <= MOBILE["height"]  # and so is the input, without scrolling the page
    # "No messages yet." belongs to an empty thread only.
    empty = doctor.evaluate(
        "() => [...document.querySelectorAll('.scroller')].map(s => getComputedStyle(s, '::before').content)"
    )
    assert all("No messages yet" not in c for c in empty), empty
    assert log.count() == 1
