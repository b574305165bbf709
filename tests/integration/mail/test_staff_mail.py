"""A doctor's own mail through a real SMTP server on loopback, on SQLite and PostgreSQL: a doctor who gave an
address and chose a kind is mailed a new request for them and a patient's cancellation of their appointment, in
their language, text + HTML without a calendar part, through the patients' outbox; a doctor who chose nothing or
gave no address is mailed nothing. The address is the user's own: checked and normalized, another's is 404, a
patient's is not set here, an admin may set a staff member's."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

import pytest
from sqlalchemy import func, select, update

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.roles import Actor, Role
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import staff_mail
from doctordesk.services.accounts.staff_mail import StaffMail
from doctordesk.store.mail_tables import MailMessage, StaffMailSetting
from doctordesk.store.tables import User
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.support.integration import make_key, request_body
from tests.support.review import APPROVED, aid
from tests.support.smtp_server import SmtpServer

REQUESTS = "/integration/v1/appointment-requests"


def _actor(demo: Any, name: str, role: Role) -> Actor:
    return Actor(user_id=demo.users[name], username=name, role=role, display_name=name)


async def _send(runtime: Runtime) -> None:
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).drain()


async def _kinds(runtime: Runtime) -> list[str]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(MailMessage.kind).order_by(MailMessage.id))).all())


def _to(message: EmailMessage) -> str:
    return str(message["To"].addresses[0].addr_spec)


async def test_a_doctor_who_chose_it_is_mailed_a_new_request_in_their_language_without_a_calendar_part(
    client, login, demo, runtime, smtp: SmtpServer
):
    doctor = _actor(demo, "doctor1", Role.DOCTOR)
    await staff_mail.save(runtime, doctor, doctor.user_id, StaffMail("Dr.Berger@Praxis.EXAMPLE", new_request=True))
    async with runtime.db.transaction() as s:
        await s.execute(update(User).where(User.id == doctor.user_id).values(language="de"))
    key = await make_key(client, (await login("admin")).headers)
    created = await client.post(REQUESTS, headers=key.headers, json=request_body(demo))
    assert created.status_code == 201, created.text
    assert await _kinds(runtime) == ["staff-new-request"]  # a request mails no patient
    await _send(runtime)
    [message] = smtp.mailbox.messages()
    assert _to(message) == "Dr.Berger@praxis.example"  # normalized: the domain lowercased
    assert message["Content-Language"] == "de" and message["Subject"].startswith("Neue Terminanfrage")
    assert [p.get_content_type() for p in message.walk()] == ["multipart/alternative", "text/plain", "text/html"]
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "bittet" in text and "<" not in text
    async with runtime.db.read() as s:
        [row] = (await s.scalars(select(MailMessage))).all()
    assert row.status == "sent" and message["Message-ID"] == row.message_id


async def test_a_patients_cancellation_mails_the_patient_and_the_doctor_who_chose_it(
    client, login, demo, runtime, smtp: SmtpServer
):
    doctor = _actor(demo, "doctor1", Role.DOCTOR)
    await staff_mail.save(runtime, doctor, doctor.user_id, StaffMail("berger@example.com", canceled_by_patient=True))
    key = await make_key(client, (await login("admin")).headers)
    assert (await client.post(REQUESTS, headers=key.headers, json=request_body(demo))).status_code == 201
    a = aid(demo, APPROVED)
    canceled = await client.post(
        f"/integration/v1/appointments/{a}/cancel", headers=key.headers, json={"by": "patient", "reason": "Away"}
    )
    assert canceled.status_code == 200, canceled.text
    assert await _kinds(runtime) == ["canceled-by-patient", "staff-canceled-by-patient"]  # no mail for the request
    await _send(runtime)
    patients, doctors = smtp.mailbox.messages()
    assert _to(doctors) == "berger@example.com" and _to(patients) != "berger@example.com"
    assert patients["Message-ID"] != doctors["Message-ID"]
    assert "canceled their appointment" in doctors["Subject"]
    assert not [p for p in doctors.walk() if p.get_content_type() == "text/calendar"]
    assert [p for p in patients.walk() if p.get_content_type() == "text/calendar"]


async def test_no_mail_for_a_doctor_without_an_address_or_without_the_choice(client, login, demo, runtime, smtp):
    doctor = _actor(demo, "doctor1", Role.DOCTOR)
    await staff_mail.save(runtime, doctor, doctor.user_id, StaffMail("berger@example.com"))  # chose nothing
    key = await make_key(client, (await login("admin")).headers)
    assert (await client.post(REQUESTS, headers=key.headers, json=request_body(demo))).status_code == 201
    await staff_mail.save(runtime, doctor, doctor.user_id, StaffMail(None, new_request=True))  # no address
    body = request_body(demo, start="2026-11-27T10:00:00+01:00")
    assert (await client.post(REQUESTS, headers=key.headers, json=body)).status_code == 201
    assert await _kinds(runtime) == []
    await _send(runtime)
    assert smtp.mailbox.messages() == []


async def test_the_address_is_the_users_own_checked_and_set_by_an_admin_for_staff_only(demo, runtime):
    doctor = _actor(demo, "doctor1", Role.DOCTOR)
    other = demo.users["doctor2"]
    with pytest.raises(ValidationFailed) as refused:
        await staff_mail.save(runtime, doctor, doctor.user_id, StaffMail("not an address", new_request=True))
    assert "email" in refused.value.fields
    with pytest.raises(NotFound):
        await staff_mail.save(runtime, doctor, other, StaffMail("x@example.com"))
    admin = _actor(demo, "admin", Role.ADMIN)
    with pytest.raises(NotFound):
        await staff_mail.save(runtime, admin, demo.users["patient1"], StaffMail("x@example.com"))
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(StaffMailSetting)) == 0  # nothing written
    support = demo.users["support1"]
    await staff_mail.save(runtime, admin, support, StaffMail("Help@Example.ORG", canceled_by_patient=True))
    assert await staff_mail.read(runtime, support) == StaffMail("Help@example.org", False, True)
