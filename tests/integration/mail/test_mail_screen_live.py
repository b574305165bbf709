"""The administration's Mail screen follows the sender: each mail's new state (sent, due again, failed, unknown) is
published after it commits, so an admin's open screen gets it in its next poll's update set, on SQLite and
PostgreSQL. Without that event the screen's poll is answered unchanged: the event is what moves it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from doctordesk.runtime import Runtime
from doctordesk.store.mail_tables import MailMessage
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.support.review import REQUESTED, aid, approve_url
from tests.support.smtp_server import SmtpServer

SCREEN = "/profile/admin/mail"


async def _approved(client: Any, login: Any, demo: Any) -> None:
    doctor = await login("doctor1")
    response = await client.post(approve_url(aid(demo, REQUESTED)), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text


async def _open(client: Any, admin: Any) -> str:
    page = await client.put(SCREEN, headers=admin.headers)
    assert page.status_code == 200, page.text
    state: str = page.json()["state"]
    return state


async def _poll(client: Any, admin: Any, state: str) -> dict[str, Any]:
    response = await client.patch(SCREEN, headers={**admin.headers, "X-Screen-State": state})
    assert response.status_code == 200, response.text
    update: dict[str, Any] = response.json()
    return update


async def _row(runtime: Runtime) -> MailMessage:
    async with runtime.db.read() as s:
        [row] = (await s.scalars(select(MailMessage))).all()
    return row


async def test_a_sent_mail_reaches_the_open_mail_screen_in_its_next_poll(client, login, demo, runtime, smtp):
    await _approved(client, login, demo)
    admin = await login("admin")
    state = await _open(client, admin)  # the mail is waiting
    assert (await _poll(client, admin, state))["patches"] == []
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock, on_changed=runtime.publish).drain()
    row = await _row(runtime)
    assert row.status == "sent" and len(smtp.mailbox.messages()) == 1
    update = await _poll(client, admin, state)
    assert update["state"] != state
    shown = json.dumps(update["patches"], ensure_ascii=False)
    assert f"{row.recipient} · sent" in shown and f"{row.recipient} · waiting" not in shown


async def test_a_retried_then_failed_mail_reaches_the_open_screen_at_each_step(
    client, login, demo, runtime, clock, smtp: SmtpServer
):
    smtp.mailbox.rcpt_answers = ["451 4.3.0 Try again later", "550 5.1.1 No such mailbox"]
    await _approved(client, login, demo)
    admin = await login("admin")
    state = await _open(client, admin)
    sender = MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock, on_changed=runtime.publish)
    assert await sender.round()
    retried = await _poll(client, admin, state)
    assert retried["state"] != state and "451 4.3.0 Try again later" in json.dumps(
        retried["patches"], ensure_ascii=False
    )
    clock.advance(timedelta(seconds=runtime.settings.mail_backoff_seconds * 1.3))
    assert await sender.round()
    failed = await _poll(client, admin, retried["state"])
    shown = json.dumps(failed["patches"], ensure_ascii=False)
    assert failed["state"] != retried["state"] and "not sent" in shown and "550 5.1.1 No such mailbox" in shown
    assert (await _row(runtime)).status == "failed"


async def test_without_the_event_the_open_screen_is_answered_unchanged(client, login, demo, runtime, smtp):
    await _approved(client, login, demo)
    admin = await login("admin")
    state = await _open(client, admin)
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).drain()  # tells nobody
    assert (await _row(runtime)).status == "sent"
    held = await _poll(client, admin, state)
    assert held["patches"] == [] and held["state"] == state
