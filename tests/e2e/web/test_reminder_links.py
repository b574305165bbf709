"""A reminder's links in the browser (docs/notifications.md#reminders): the page of "I will come" and of "I need
to cancel", in English and German, on a phone and a desktop, axe clean, asking before it acts; and the doctor's open
list showing the patient's confirmation without a reload, and their week view in the entry's details.

The server sends real mail to an SMTP server on loopback; the clinic's reminder window is set to two weeks, so
every approved appointment of the demo clinic gets its reminder at once, and the tests take the links from there.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from icalendar import Calendar

from tests.e2e.web.conftest import DESKTOP, MOBILE, axe_violations, sign_in
from tests.support.live import LiveServer, serving
from tests.support.moments import MONDAY_MORNING
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.browser

LINK = re.compile(r"https?://[^\s<>\"]+(/reminder/[A-Za-z0-9_-]+)")


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer) -> Iterator[LiveServer]:
    with serving(
        tmp_path_factory.mktemp("reminder-links"),
        at=MONDAY_MORNING,
        DOCTORDESK_SMTP_URL=smtp.url,
        DOCTORDESK_MAIL_FROM="praxis@clinic.example",
        DOCTORDESK_MAIL_POLL_SECONDS="0.1",
        DOCTORDESK_REMINDER_POLL_SECONDS="0.1",
    ) as live:
        yield live


def token(base_url: str, username: str) -> dict[str, str]:
    answer = httpx.post(f"{base_url}/auth/login", data={"username": username, "password": "demo"}, timeout=10)
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


@pytest.fixture(scope="module")
def links(server: LiveServer, smtp: SmtpServer) -> dict[int, tuple[str, str]]:
    """Per approved appointment (doctor1's first): its reminder's confirm and cancel paths."""
    admin = token(server.url, "admin")
    changed = httpx.put(
        f"{server.url}/admin/clinic", headers=admin, json={"reminder_hours": [336], "quiet_begin": "", "quiet_end": ""}
    )
    assert changed.status_code == 200, changed.text
    found: dict[int, tuple[str, str]] = {}
    deadline = time.monotonic() + 30
    while len(found) < 4:  # the sender's next rounds
        assert time.monotonic() < deadline, f"reminders seen: {sorted(found)}"
        for message in smtp.mailbox.messages():
            if not message["Subject"].startswith("Reminder"):
                continue
            [part] = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
            [event] = Calendar.from_ical(part.get_payload(decode=True)).walk("VEVENT")
            appointment = int(str(event["UID"]).split("@")[0].removeprefix("appointment-"))
            text = message.get_body(preferencelist=("plain",)).get_content()
            confirm, cancel = LINK.findall(text)
            found[appointment] = (confirm, cancel)
        time.sleep(0.1)
    doctor = token(server.url, "doctor1")
    mine = [
        a for a in sorted(found) if httpx.get(f"{server.url}/api/appointments/{a}", headers=doctor).status_code == 200
    ]
    others = [a for a in sorted(found) if a not in mine]
    return {a: found[a] for a in mine + others}


def patient_of(server: LiveServer, appointment: int) -> str:
    admin = token(server.url, "admin")
    patient_id = httpx.get(f"{server.url}/api/appointments/{appointment}", headers=admin).json()["patient"]["id"]
    users = httpx.get(f"{server.url}/admin/users", headers=admin, params={"role": "patient"}).json()["users"]
    return next(u["username"] for u in users if u.get("patient_id") == patient_id)


def speak(server: LiveServer, username: str, language: str) -> None:
    response = httpx.put(
        f"{server.url}/profile/language", headers=token(server.url, username), data={"language": language}
    )
    assert response.status_code == 200, response.text


def no_violations(page: Any) -> None:
    assert axe_violations(page) == []


def pick(links: dict[int, tuple[str, str]], n: int) -> tuple[int, str, str]:
    appointments = list(links)  # doctor1's first
    assert len(appointments) > n, links
    a = appointments[n]
    return a, *links[a]


def test_i_will_come_on_a_desktop_in_english_and_the_doctors_list_shows_it(server, new_page, links):
    a, confirm, _ = pick(links, 0)
    speak(server, patient_of(server, a), "en")
    doctor = new_page(server.url)
    sign_in(doctor, "doctor1")
    doctor.locator('#connection[data-status="live"]').wait_for()
    doctor.locator(f'[data-id="appointment-{a}"]').wait_for()
    assert doctor.locator(f'[data-id="confirmed-{a}"]').count() == 0

    page = new_page(server.url, viewport=DESKTOP)
    page.goto(confirm)
    page.get_by_role("heading", name="Your appointment").wait_for()
    assert page.locator("html").get_attribute("lang") == "en"
    assert "Please confirm that you will come" in (page.locator("main").text_content() or "")
    no_violations(page)
    page.get_by_role("button", name="I will come").click()
    page.get_by_role("status").wait_for()
    assert "the clinic now knows that you will come" in (page.get_by_role("status").text_content() or "")
    no_violations(page)
    # The doctor's open list follows live, in words.
    badge = doctor.locator(f'[data-id="confirmed-{a}"]')
    badge.wait_for()
    assert "Patient confirmed" in (badge.text_content() or "")
    # And the doctor's week view says so in the entry's details.
    doctor.locator('[data-id="week-view"]').click()
    entry = doctor.locator(f'[data-id^="slot-{a}-"]')
    entry.wait_for()
    assert "Patient confirmed" in (entry.locator(".event-details").text_content() or "")
    assert "Patient confirmed" in (entry.get_attribute("title") or "")
    # The link was used: opening it again says so.
    page.goto(confirm)
    assert "already used" in (page.get_by_role("status").text_content() or "")


def test_i_will_come_on_a_phone_in_german(server, new_page, links):
    a, confirm, _ = pick(links, 1)
    speak(server, patient_of(server, a), "de")
    page = new_page(server.url, viewport=MOBILE, locale="de-DE")
    page.goto(confirm)
    page.get_by_role("heading", name="Ihr Termin").wait_for()
    assert page.locator("html").get_attribute("lang") == "de"
    no_violations(page)
    button = page.get_by_role("button", name="Ich komme")
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= MOBILE["width"]
    button.click()
    assert "Die Praxis weiß jetzt, dass Sie kommen" in (page.get_by_role("status").text_content() or "")
    no_violations(page)


def test_i_need_to_cancel_on_a_phone_in_english(server, new_page, links):
    a, _, cancel = pick(links, 2)
    speak(server, patient_of(server, a), "en")  # the page is in the patient's language, whatever the browser's
    page = new_page(server.url, viewport=MOBILE)
    page.goto(cancel)
    page.get_by_role("heading", name="Your appointment").wait_for()
    assert "Do you want to cancel this appointment?" in (page.locator("main").text_content() or "")
    no_violations(page)
    page.get_by_role("button", name="Cancel the appointment").click()
    assert "Your appointment is canceled" in (page.get_by_role("status").text_content() or "")
    no_violations(page)
    admin = token(server.url, "admin")
    assert httpx.get(f"{server.url}/api/appointments/{a}", headers=admin).json()["status"]["name"] == "canceled"


def test_i_need_to_cancel_on_a_desktop_in_german(server, new_page, links):
    a, _, cancel = pick(links, 3)
    speak(server, patient_of(server, a), "de")
    page = new_page(server.url, viewport=DESKTOP, locale="de-DE")
    page.goto(cancel)
    page.get_by_role("heading", name="Ihr Termin").wait_for()
    no_violations(page)
    page.get_by_role("button", name="Termin absagen").click()
    assert "Ihr Termin ist abgesagt" in (page.get_by_role("status").text_content() or "")
    no_violations(page)


def test_a_forged_link_gets_a_clear_page(server, new_page):
    page = new_page(server.url, viewport=MOBILE)
    response = page.goto("/reminder/not-a-real-token")
    assert response is not None and response.status == 404
    assert "This link is not valid" in (page.get_by_role("status").text_content() or "")
    no_violations(page)
