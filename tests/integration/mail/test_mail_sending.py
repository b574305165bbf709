"""Patients' mail through a real SMTP server on loopback, on SQLite and PostgreSQL: a decision queues its mail in
its own transaction, the sender hands it over once, the mail is multipart text + HTML in the patient's language
with the appointment as an iCalendar part; a 4xx comes back later, a 5xx fails the mail for good and tells the
admins; every attempt is logged."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

from icalendar import Calendar
from sqlalchemy import select, update

from doctordesk.runtime import Runtime
from doctordesk.store.mail_tables import MailAttempt, MailMessage
from doctordesk.store.tables import Appointment, Patient, User
from doctordesk.store.webhook_tables import AdminNotice
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.integration.mail.conftest import SENDER
from tests.support.integration import make_key
from tests.support.review import REQUESTED, aid, approve_url
from tests.support.smtp_server import SmtpServer


def sender_for(runtime: Runtime) -> MailDispatcher:
    return MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock)


async def mails(runtime: Runtime) -> list[MailMessage]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(MailMessage).order_by(MailMessage.id))).all())


async def attempts(runtime: Runtime, mail_id: int) -> list[tuple[str, int | None]]:
    async with runtime.db.read() as s:
        rows = await s.execute(select(MailAttempt.outcome, MailAttempt.code).where(MailAttempt.mail_id == mail_id))
        return [(o, c) for o, c in rows.all()]


def calendar_of(message: EmailMessage) -> tuple[str, Calendar]:
    [part] = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
    return part.get_param("method"), Calendar.from_ical(part.get_payload(decode=True))


async def patient_of(runtime: Runtime, appointment_id: int) -> tuple[str, int | None]:
    async with runtime.db.read() as s:
        row = (
            await s.execute(
                select(Patient.email, Patient.user_id)
                .join(Appointment, Appointment.patient_id == Patient.id)
                .where(Appointment.id == appointment_id)
            )
        ).one()
    return row[0], row[1]


async def test_an_approval_mails_the_patient_once_with_text_html_and_a_calendar_request(
    client, login, demo, runtime, smtp: SmtpServer
):
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    response = await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    [row] = await mails(runtime)
    assert (row.status, row.kind, row.appointment_id) == ("pending", "approved", a)  # queued with the decision
    sender = sender_for(runtime)
    await sender.drain()
    assert not await sender.round()  # nothing left: sent once
    [message] = smtp.mailbox.messages()
    address, _ = await patient_of(runtime, a)
    assert address.endswith("@example.org") and message["To"].addresses[0].addr_spec == address
    assert message["From"] == SENDER and message["Message-ID"] == row.message_id
    assert smtp.mailbox.greetings == ["clinic.example"]  # EHLO with the sender's domain, no resolver lookup
    assert message.get_content_type() == "multipart/mixed"
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "is confirmed" in text and "is confirmed" in html and "<img" not in html and "http" not in html
    method, calendar = calendar_of(message)
    [event] = calendar.walk("VEVENT")
    assert method == "REQUEST" and calendar["METHOD"] == "REQUEST"
    assert str(event["UID"]) == f"appointment-{a}@clinic.example" and event["STATUS"] == "CONFIRMED"
    assert int(event["SEQUENCE"]) == 2  # the appointment's version after the approval
    assert str(event["DTSTART"].params["TZID"]) == "Europe/Berlin"
    [row] = await mails(runtime)
    assert (row.status, row.attempts) == ("sent", 1) and await attempts(runtime, row.id) == [("sent", 250)]


async def test_a_cancellation_by_the_clinic_cancels_the_same_calendar_event_with_a_higher_sequence(
    client, login, demo, runtime, smtp: SmtpServer
):
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    key = await make_key(client, (await login("admin")).headers)
    response = await client.post(
        f"/integration/v1/appointments/{a}/cancel", headers=key.headers, json={"by": "clinic", "reason": "Doctor ill"}
    )
    assert response.status_code == 200, response.text
    await sender_for(runtime).drain()
    approved, canceled = smtp.mailbox.messages()
    _, first = calendar_of(approved)
    method, second = calendar_of(canceled)
    [before], [after] = first.walk("VEVENT"), second.walk("VEVENT")
    assert method == "CANCEL" and second["METHOD"] == "CANCEL" and after["STATUS"] == "CANCELLED"
    assert after["UID"] == before["UID"] and int(after["SEQUENCE"]) > int(before["SEQUENCE"])
    assert "canceled" in canceled["Subject"]
    assert "Reason: Doctor ill" not in canceled.get_body(preferencelist=("plain",)).get_content()


async def test_a_german_patient_reads_the_mail_in_german_with_the_time_in_the_locations_zone(
    client, login, demo, runtime, smtp: SmtpServer
):
    a = aid(demo, REQUESTED)
    _, user_id = await patient_of(runtime, a)
    async with runtime.db.transaction() as s:
        await s.execute(update(User).where(User.id == user_id).values(language="de"))
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    await sender_for(runtime).drain()
    [message] = smtp.mailbox.messages()
    assert message["Content-Language"] == "de"
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "ist bestätigt" in text and "MEZ" in text  # Wed 25 Nov 09:00 Berlin, in German


async def test_a_patient_without_an_address_gets_no_mail(client, login, demo, runtime, smtp: SmtpServer):
    a = aid(demo, REQUESTED)
    async with runtime.db.transaction() as s:
        patient = await s.scalar(select(Appointment.patient_id).where(Appointment.id == a))
        await s.execute(update(Patient).where(Patient.id == patient).values(email=None))
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    assert await mails(runtime) == []


async def test_a_temporary_refusal_is_retried_after_the_backoff_under_the_same_message_id(
    client, login, demo, runtime, clock, smtp: SmtpServer
):
    smtp.mailbox.data_answers = ["451 4.3.0 Try again later"]
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    sender = sender_for(runtime)
    assert await sender.round()
    [row] = await mails(runtime)
    assert (row.status, row.last_code) == ("pending", 451) and row.next_attempt_at > clock.now()
    assert not await sender.round()  # not before its time
    clock.advance(timedelta(seconds=runtime.settings.mail_backoff_seconds * 1.3))
    await sender.drain()
    [message] = smtp.mailbox.messages()
    [row] = await mails(runtime)
    assert (row.status, row.attempts) == ("sent", 2) and message["Message-ID"] == row.message_id
    assert await attempts(runtime, row.id) == [("retry", 451), ("sent", 250)]


async def test_a_permanent_refusal_fails_the_mail_and_tells_the_admins(client, login, demo, runtime, smtp: SmtpServer):
    smtp.mailbox.rcpt_answers = ["550 5.1.1 No such mailbox"]
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    sender = sender_for(runtime)
    await sender.drain()
    assert smtp.mailbox.messages() == []
    [row] = await mails(runtime)
    assert (row.status, row.last_code, row.attempts) == ("failed", 550, 1)
    assert await attempts(runtime, row.id) == [("failed", 550)]
    async with runtime.db.read() as s:
        [notice] = (await s.scalars(select(AdminNotice).where(AdminNotice.kind == "mail.not-sent"))).all()
    assert row.recipient in notice.text and "550" in notice.text
    admin = await login("admin")
    response = await client.get("/admin/notices", headers={**admin.headers, "Accept-Language": "de"})
    assert response.status_code == 200, response.text
    assert any("wurde nicht gesendet" in n["text"] for n in response.json()["notices"])


def texts(elements):
    for e in elements:
        yield from (str(e[k]) for k in ("value", "label") if e.get(k))
        yield from texts(e.get("children") or [])


async def test_the_mail_screen_shows_admins_the_refused_mail_in_their_language(
    client, login, demo, runtime, smtp: SmtpServer
):
    smtp.mailbox.rcpt_answers = ["550 5.1.1 No such mailbox"]
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    await sender_for(runtime).drain()
    [row] = await mails(runtime)
    admin = await login("admin")
    page = await client.put("/profile/admin/mail", headers={**admin.headers, "Accept-Language": "de"})
    assert page.status_code == 200, page.text
    [problem] = [e for e in page.json()["elements"] if e.get("id") == "not-sent"]
    shown = list(texts(problem["children"]))
    assert f"Termin bestätigt · {row.recipient} · nicht gesendet" in shown
    assert any("550 5.1.1 No such mailbox" in t for t in shown) and row.message_id in shown
    assert (await client.put("/profile/admin/mail", headers=doctor.headers)).status_code == 404


async def test_the_sender_never_waits_for_the_resolver_to_name_this_machine(
    client, login, demo, runtime, smtp: SmtpServer, monkeypatch
):
    """Where reverse lookups time out, asking the resolver for the machine's name (the SMTP library's default
    greeting) takes seconds per round: the sender greets with the sender's domain and never asks."""
    import socket

    def no_lookup(name: str = "") -> str:
        raise AssertionError("the mail sender asked the resolver for this machine's name")

    monkeypatch.setattr(socket, "getfqdn", no_lookup)
    doctor = await login("doctor1")
    response = await client.post(approve_url(aid(demo, REQUESTED)), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    await sender_for(runtime).drain()
    [row] = await mails(runtime)
    assert row.status == "sent" and len(smtp.mailbox.messages()) == 1
