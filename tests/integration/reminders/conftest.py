"""The reminder tests: a real SMTP server and push partner on loopback, settings that send through them, and an
approved appointment of the demo clinic placed at a stated start far beyond the demo's own dates (so no other
appointment is due). The tests drive the reminder sender and the mail and push senders round by round at the
moments they name (the Clock), so none runs in the app."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from doctordesk.bootstrap import build_dispatcher
from doctordesk.config import Settings
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.services.reminders.sender import send_due
from doctordesk.store.mail_tables import MailAttempt, MailMessage, ReminderSent
from doctordesk.store.tables import Appointment, Location, Patient
from doctordesk.workers.mail_dispatcher import MailDispatcher
from doctordesk.workers.push_dispatcher import Dispatcher
from tests.support.push_stub import PushStub
from tests.support.review import APPROVED, aid
from tests.support.smtp_server import SmtpServer

SENDER = "praxis@clinic.example"
# Wednesday 20 January 2027, 10:00 in Berlin (CET, UTC+1): weeks after every demo appointment.
START = datetime(2027, 1, 20, 9, 0, tzinfo=UTC)
PHONE = {"X-Device-Id": "reminder-phone", "X-Push-Platform": "android", "X-Push-Token": "reminder-token"}
LINK = re.compile(r"https?://[^\s<>\"]+/reminder/[A-Za-z0-9_-]+")


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def push() -> Iterator[PushStub]:
    stub = PushStub()
    stub.up()
    try:
        yield stub
    finally:
        stub.down()


@pytest.fixture
def settings(
    database_url: str, settings_factory: Callable[..., Settings], smtp: SmtpServer, push: PushStub
) -> Settings:
    values: dict[str, Any] = {
        "smtp_url": smtp.url,
        "mail_from": SENDER,
        "mail_in_process": False,
        "mail_timeout_seconds": 5,
        "mail_lease_seconds": 15,
        "push_url": push.url,
        "push_in_process": False,
        "reminder_in_process": False,
        "webhook_in_process": False,
        "webhook_allow_private_addresses": True,
        "patient_cancel_hours": 12,
        "public_url": "https://clinic.example",
    }
    return settings_factory(database_url, **values)


@dataclass
class Reminders:
    """The reminder sender and the outboxes' senders of one test, at the test's clock."""

    runtime: Runtime
    clock: FixedClock
    smtp: SmtpServer
    push: PushStub

    async def at(self, moment: datetime) -> list[EmailMessage]:
        """Put the clock at ``moment``, send the reminders due and the mail and push they queued; the mails the
        relay got in this round."""
        self.clock.at = moment
        before = len(self.smtp.mailbox.messages())
        await send_due(self.runtime.db, self.runtime.settings, now=moment)
        await MailDispatcher(self.runtime.db, settings=self.runtime.settings, clock=self.clock).drain()
        pusher: Dispatcher | None = build_dispatcher(self.runtime)
        assert pusher is not None
        await pusher.drain()
        await pusher.close()
        got = self.smtp.mailbox.messages()[before:]
        print(f"round at {moment.isoformat()}: {len(got)} mail(s)\n{await self.state()}")  # shown when a test fails
        return got

    async def state(self) -> str:
        """What the reminder and mail tables hold: when a round sent less than a test expects, its report says
        whether the reminder was not found, not written, or its mail not handed to the relay."""
        lines = []
        async with self.runtime.db.read() as s:
            for row in (
                await s.execute(
                    select(ReminderSent.appointment_id, ReminderSent.start_at, ReminderSent.hours, ReminderSent.sent_at)
                )
            ).all():
                lines.append(f"  reminder sent: {tuple(row)}")
            mails = select(
                MailMessage.id,
                MailMessage.kind,
                MailMessage.status,
                MailMessage.attempts,
                MailMessage.next_attempt_at,
                MailMessage.last_code,
                MailMessage.last_error,
            )
            for row in (await s.execute(mails)).all():
                lines.append(f"  mail: {tuple(row)}")
            for row in (
                await s.execute(select(MailAttempt.mail_id, MailAttempt.outcome, MailAttempt.code, MailAttempt.error))
            ).all():
                lines.append(f"  attempt: {tuple(row)}")
            approved = select(Appointment.id, Appointment.start_at).where(
                Appointment.status == int(Status.APPROVED), Appointment.start_at > START - timedelta(days=30)
            )
            for row in (await s.execute(approved)).all():
                lines.append(f"  approved: {tuple(row)}")
        return "\n".join(lines)


@pytest.fixture
def reminders(runtime: Runtime, clock: FixedClock, smtp: SmtpServer, push: PushStub) -> Reminders:
    return Reminders(runtime, clock, smtp, push)


async def place(runtime: Runtime, demo: Any, start: datetime = START) -> int:
    """The demo's approved appointment (Berlin), moved to ``start``."""
    a = aid(demo, APPROVED)
    async with runtime.db.transaction() as s:
        await s.execute(
            update(Appointment).where(Appointment.id == a).values(start_at=start, status=int(Status.APPROVED))
        )
    return a


async def zone_and_patient(runtime: Runtime, appointment_id: int) -> tuple[str, int | None, str | None]:
    async with runtime.db.read() as s:
        row = (
            await s.execute(
                select(Location.timezone, Patient.user_id, Patient.email)
                .join(Appointment, Appointment.location_id == Location.id)
                .join(Patient, Patient.id == Appointment.patient_id)
                .where(Appointment.id == appointment_id)
            )
        ).one()
    return row[0], row[1], row[2]


def links_of(message: EmailMessage) -> list[str]:
    """The reminder's links as the plain text gives them: confirm first, then cancel."""
    text = message.get_body(preferencelist=("plain",)).get_content()
    return LINK.findall(text)


def path_of(url: str) -> str:
    return "/reminder/" + url.rsplit("/reminder/", 1)[1]


async def phone_of(client: httpx.AsyncClient, login: Callable[[str], Any], username: str) -> None:
    """The patient's app has made a call with its push headers: their phone gets notifications."""
    patient = await login(username)
    response = await client.put("/profile/appointments", headers={**patient.headers, **PHONE})
    assert response.status_code == 200, response.text


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


@pytest.fixture
def register(client: httpx.AsyncClient, login: Callable[[str], Any]) -> Callable[..., Any]:
    """``await register(url, ["appointment.confirmed"])`` → the created webhook endpoint (with its secret)."""

    async def do(url: str, event_types: list[str]) -> dict[str, Any]:
        admin = await login("admin")
        response = await client.post(
            "/admin/webhooks", json={"url": url, "event_types": event_types}, headers=admin.headers
        )
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    return do
