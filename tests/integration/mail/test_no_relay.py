"""No SMTP relay configured (``DOCTORDESK_SMTP_URL`` empty), on SQLite and PostgreSQL: no email at all — a decision
that would mail its patient queues nothing and no sender runs — and the server says so once in its log at start
(docs/notifications.md#the-relay)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from sqlalchemy import func, select

from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.store.mail_tables import MailMessage
from doctordesk.store.tables import Appointment, Patient
from tests.support.review import REQUESTED, aid, approve_url

SAID = "no SMTP relay (DOCTORDESK_SMTP_URL): patients are not sent email"


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    # The server's own senders run (as in production); only the relay is missing.
    return settings_factory(database_url, smtp_url="", mail_from="")


async def test_without_a_relay_nothing_is_queued_and_no_sender_runs(client, login, demo, runtime, app):
    assert "mail-dispatcher" not in app.state.assembly.tasks.started
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    response = await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        # The patient has an address: it is the missing relay that mails nobody.
        address = await s.scalar(
            select(Patient.email).join(Appointment, Appointment.patient_id == Patient.id).where(Appointment.id == a)
        )
        assert address and await s.scalar(select(func.count()).select_from(MailMessage)) == 0


async def test_the_server_says_once_at_start_that_patients_are_not_sent_email(settings, clock, caplog):
    caplog.set_level(logging.INFO, logger="doctordesk")
    application = create_app(settings, clock=clock)
    async with application.router.lifespan_context(application):
        started = list(application.state.assembly.tasks.started)
    assert "mail-dispatcher" not in started and "webhook-dispatcher" in started
    said = [r for r in caplog.records if r.getMessage() == SAID]
    assert len(said) == 1 and said[0].levelno == logging.INFO
