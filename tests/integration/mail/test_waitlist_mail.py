"""A freed time offered from the waitlist is mailed to the patient (docs/waitlist.md, docs/notifications.md), on
SQLite and PostgreSQL: queued with the offer, sent to the real SMTP server once, in the patient's words and
language, saying how long the time is theirs (one at a time) or that the first to accept gets it (all at once),
without a calendar part (nothing is agreed until they accept)."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.mail_tables import MailMessage
from doctordesk.store.tables import User
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.integration.mail.conftest import SENDER
from tests.integration.waitlist.support import APPROVED_TUESDAY, cancel, join, slot_of
from tests.support.review import aid
from tests.support.smtp_server import SmtpServer


@pytest.fixture
def settings(database_url, settings_factory, smtp: SmtpServer):
    return settings_factory(
        database_url,
        smtp_url=smtp.url,
        mail_from=SENDER,
        mail_in_process=False,
        mail_timeout_seconds=5,
        mail_lease_seconds=15,
        waitlist_in_process=False,
    )


async def test_an_offer_is_mailed_to_the_patient_once_without_a_calendar_part(client, login, demo, runtime, smtp):
    patient, owner = await login("patient1"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    async with runtime.db.read() as s:
        rows = (await s.scalars(select(MailMessage).where(MailMessage.kind == "waitlist-offer"))).all()
    [row] = rows
    assert row.patient_id == demo.patients["patient1"] and row.appointment_id is None
    sender = MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock)
    await sender.drain()
    offers = [m for m in smtp.mailbox.messages() if "earlier time" in str(m["Subject"])]
    [message] = offers
    assert message["Subject"] == "An earlier time with Dr. Anna Berger is free"
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "Dear Maria Schmidt, an earlier time with Dr. Anna Berger is free: Tue 24 Nov 2026, 16:00 CET" in text
    # One at a time (the default): theirs for the offer minutes (30), then the next patient's.
    assert "It is offered to you until Mon 23 Nov 2026, 08:30 CET; then it goes to the next patient waiting." in text
    assert not [p for p in message.walk() if p.get_content_type() == "text/calendar"]


async def test_offered_to_all_at_once_the_mail_says_the_first_to_accept_gets_it_in_the_patients_language(
    client, login, demo, runtime, smtp
):
    admin = await login("admin")
    chosen = await client.put("/admin/clinic", headers=admin.headers, json={"waitlist_mode": "all-at-once"})
    assert chosen.status_code == 200, chosen.text
    patient, owner = await login("patient1"), await login("patient4")
    async with runtime.db.transaction() as s:
        await s.execute(update(User).where(User.id == patient.user["id"]).values(language="de"))
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).drain()
    [message] = [m for m in smtp.mailbox.messages() if "früherer Termin" in str(m["Subject"])]
    assert message["Content-Language"] == "de"
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "ein früherer Termin bei Dr. Anna Berger ist frei: Di., 24. Nov. 2026, 16:00 MEZ" in text
    assert "Wer ihn zuerst annimmt, bekommt ihn." in text and "bis " not in text
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "Wer ihn zuerst annimmt, bekommt ihn." in html
