"""Never twice, under ``kill -9``: a ``doctordesk worker`` killed in the middle of a batch (one mail handed over
and not yet answered by the relay, others not yet sent) leaves no mail that a later sender sends again; the mail
cut off after its hand-over is marked unknown, every other one arrives exactly once (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from doctordesk.domain.clock import ShiftedClock, SystemClock
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.services.mail import outbox
from doctordesk.store.mail_tables import MailMessage
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.integration.mail.conftest import SENDER
from tests.support import processes
from tests.support.smtp_server import SmtpServer

BATCH = 12
SENT_BEFORE_THE_KILL = 5


async def test_a_worker_killed_mid_batch_sends_no_mail_twice(
    database_url, demo, runtime, settings, tmp_path, smtp: SmtpServer
):
    events = [
        DomainEvent(EventKind.APPOINTMENT_APPROVE, (), {"appointment_id": a}) for a in list(demo.appointments)[:BATCH]
    ]
    async with runtime.db.transaction() as session:
        # Due at the system clock's time: the worker runs on it.
        assert await outbox.enqueue(session, events, now=SystemClock().now(), sender=SENDER) == BATCH
    smtp.mailbox.hold_after = SENT_BEFORE_THE_KILL  # the sixth mail's content arrives and is never answered
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),
        "DOCTORDESK_SMTP_URL": smtp.url,
        "DOCTORDESK_MAIL_FROM": SENDER,
        "DOCTORDESK_MAIL_POLL_SECONDS": "0.05",
        "DOCTORDESK_MAIL_LEASE_SECONDS": "15",
        "DOCTORDESK_MAIL_TIMEOUT_SECONDS": "5",
    }
    worker = processes.launch(["doctordesk", "worker"], env, tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 60
        while len(smtp.mailbox.received) <= SENT_BEFORE_THE_KILL:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            await asyncio.sleep(0.02)
    finally:
        worker.kill()  # SIGKILL: no goodbye, the leases and the hand-over stay as they were
        await worker.finished(30)
    smtp.mailbox.hold_after = None
    # A sender started after the leases ran out (its clock past them: no waiting).
    later = ShiftedClock(datetime.now(UTC) + timedelta(seconds=16))
    again = MailDispatcher(runtime.db, settings=settings, clock=later)
    await again.drain()
    async with runtime.db.read() as s:
        rows = list((await s.scalars(select(MailMessage).order_by(MailMessage.id))).all())
    received = Counter(m["Message-ID"] for m in smtp.mailbox.messages())
    assert max(received.values()) == 1  # nothing twice
    assert set(received) == {r.message_id for r in rows}  # and nothing lost
    statuses = Counter(r.status for r in rows)
    assert statuses == {"sent": BATCH - 1, "unknown": 1}
    [cut_off] = [r for r in rows if r.status == "unknown"]
    assert cut_off.message_id == smtp.mailbox.messages()[SENT_BEFORE_THE_KILL]["Message-ID"]
