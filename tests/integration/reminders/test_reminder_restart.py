"""No reminder twice across a restart of the sender (docs/notifications.md#reminders), on SQLite and PostgreSQL:
``doctordesk worker --once`` run twice at the same moment (a worker restarted within the window) sends the
reminder once, to the real SMTP server; and two senders at once write one reminder."""

from __future__ import annotations

import asyncio
import os
from collections import Counter

from sqlalchemy import func, select

from doctordesk.services.reminders.sender import send_due
from doctordesk.store.mail_tables import MailMessage, ReminderSent
from tests.integration.reminders.conftest import SENDER, START, hours, place
from tests.support import processes
from tests.support.live import moment_env


def worker_env(database_url, settings, smtp) -> dict[str, str]:
    return {
        **os.environ,
        **moment_env(START - hours(24) + hours(0.5)),
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),
        "DOCTORDESK_SMTP_URL": smtp.url,
        "DOCTORDESK_MAIL_FROM": SENDER,
        "DOCTORDESK_MAIL_TIMEOUT_SECONDS": "5",
        "DOCTORDESK_MAIL_LEASE_SECONDS": "15",
    }


async def test_a_restarted_worker_sends_no_reminder_twice(database_url, demo, runtime, settings, smtp):
    a = await place(runtime, demo)
    env = worker_env(database_url, settings, smtp)
    for _ in range(2):  # the worker, then the worker again after a restart
        done = await asyncio.to_thread(processes.run, ["doctordesk", "worker", "--once"], env)
        assert done.returncode == 0, done.stderr
    reminders = [m for m in smtp.mailbox.messages() if "Reminder" in m["Subject"]]
    assert len(reminders) == 1
    assert Counter(m["Message-ID"] for m in smtp.mailbox.messages()).most_common(1)[0][1] == 1
    async with runtime.db.read() as s:
        sent = (await s.execute(select(ReminderSent.appointment_id, ReminderSent.hours))).all()
    assert [tuple(r) for r in sent] == [(a, 24)]


async def test_two_senders_at_once_write_one_reminder(demo, runtime, settings):
    await place(runtime, demo)
    now = START - hours(24)
    await asyncio.gather(*(send_due(runtime.db, settings, now=now) for _ in range(4)))
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(ReminderSent)) == 1
        assert await s.scalar(select(func.count()).where(MailMessage.kind == "reminder")) == 1
