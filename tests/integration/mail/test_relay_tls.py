"""The relay's protection as ``DOCTORDESK_SMTP_URL`` names it (docs/notifications.md#the-relay), against a real SMTP
server on loopback that speaks TLS with a certificate of a CA the test trusts and requires AUTH (SQLite and
PostgreSQL): ``smtp+starttls://`` and ``smtps://`` deliver over TLS as the URL's user, a user on ``smtp://`` means
STARTTLS too; a wrong password is a refusal the admins see; an untrusted certificate or a relay without STARTTLS
gets nothing, the password included, and the mail waits for its next attempt."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.config import Settings
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.runtime import Runtime
from doctordesk.services.mail import outbox
from doctordesk.store.mail_tables import MailAttempt, MailMessage
from doctordesk.store.webhook_tables import AdminNotice
from doctordesk.workers.mail_dispatcher import MailDispatcher
from tests.integration.mail.conftest import SENDER
from tests.support.smtp_server import SmtpServer
from tests.support.tls import TlsAuthority, make_authority

USER, PASSWORD = "praxis@clinic.example", "s3cret:pw"
USERINFO = "praxis%40clinic.example:s3cret%3Apw"
EACH_WAY = pytest.mark.parametrize("relay", ["starttls", "implicit", "user-on-smtp"], indirect=True)


@pytest.fixture
def authority(tmp_path: Path) -> TlsAuthority:
    return make_authority(tmp_path)


@pytest.fixture
def trusted(authority: TlsAuthority, monkeypatch: pytest.MonkeyPatch) -> TlsAuthority:
    """The test's CA as the process's trusted roots (what "the system's CAs" are read from)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(authority.ca_file))
    return authority


def serving(**options: Any) -> Iterator[SmtpServer]:
    server = SmtpServer(**options).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def relay(request: pytest.FixtureRequest, authority: TlsAuthority) -> Iterator[tuple[SmtpServer, str]]:
    """A relay requiring TLS and AUTH, and the URL that names it with the credentials (``EACH_WAY`` chooses how)."""
    way = getattr(request, "param", "starttls")
    tls = "implicit" if way == "implicit" else "starttls"
    for server in serving(tls=tls, authority=authority, login=(USER, PASSWORD)):
        scheme = {"starttls": "smtp+starttls", "implicit": "smtps", "user-on-smtp": "smtp"}[way]
        yield server, f"{scheme}://{USERINFO}@127.0.0.1:{server.port}"


@pytest.fixture
def smtp(relay: tuple[SmtpServer, str]) -> SmtpServer:
    return relay[0]


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings], relay: tuple[SmtpServer, str]) -> Settings:
    return settings_factory(
        database_url, smtp_url=relay[1], mail_from=SENDER, mail_in_process=False, mail_timeout_seconds=5,
        mail_lease_seconds=15, reminder_in_process=False,
    )  # fmt: skip


async def queue_one(runtime: Runtime, demo: Any) -> None:
    event = DomainEvent(EventKind.APPOINTMENT_APPROVE, (), {"appointment_id": next(iter(demo.appointments))})
    async with runtime.db.transaction() as session:
        assert await outbox.enqueue(session, [event], now=runtime.clock.now(), sender=SENDER) == 1


async def the_mail(runtime: Runtime) -> tuple[MailMessage, list[tuple[str, int | None, str | None]]]:
    async with runtime.db.read() as s:
        [row] = (await s.scalars(select(MailMessage))).all()
        tried = await s.execute(
            select(MailAttempt.outcome, MailAttempt.code, MailAttempt.error).order_by(MailAttempt.id)
        )
        return row, [(o, c, e) for o, c, e in tried.all()]


@EACH_WAY
async def test_the_mail_goes_over_tls_as_the_urls_user(demo, runtime, trusted, smtp: SmtpServer):
    await queue_one(runtime, demo)
    assert await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).round()
    [message] = smtp.mailbox.messages()
    assert smtp.mailbox.delivered_over == [(True, USER)] and smtp.mailbox.logins == [(True, USER)]
    row, tried = await the_mail(runtime)
    assert row.status == "sent" and message["Message-ID"] == row.message_id
    assert [(o, c) for o, c, _ in tried] == [("sent", 250)]


@EACH_WAY
async def test_a_wrong_password_is_a_refusal_the_admins_see(
    demo, runtime, trusted, smtp: SmtpServer, relay: tuple[SmtpServer, str]
):
    runtime.settings = runtime.settings.model_copy(update={"smtp_url": relay[1].replace("s3cret%3Apw", "wrong")})
    await queue_one(runtime, demo)
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).round()
    assert smtp.mailbox.messages() == []
    row, tried = await the_mail(runtime)
    assert (row.status, row.last_code) == ("failed", 535) and [(o, c) for o, c, _ in tried] == [("failed", 535)]
    assert all("wrong" not in (e or "") and "s3cret" not in (e or "") for _, _, e in tried)
    async with runtime.db.read() as s:
        [notice] = (await s.scalars(select(AdminNotice).where(AdminNotice.kind == "mail.not-sent"))).all()
    assert "535" in notice.text


@EACH_WAY
async def test_an_untrusted_certificate_gets_nothing_and_the_mail_waits(demo, runtime, smtp: SmtpServer):
    # No trusted CA: the relay's certificate is checked and refused before AUTH, so neither mail nor password goes.
    await queue_one(runtime, demo)
    await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).round()
    assert smtp.mailbox.messages() == []
    row, tried = await the_mail(runtime)
    assert row.status == "pending" and row.next_attempt_at > runtime.clock.now()
    [(outcome, code, error)] = tried
    assert (outcome, code) == ("retry", None) and "certificate" in (error or "").lower()


@pytest.mark.parametrize("scheme", ["smtp+starttls", "smtp"])
async def test_a_relay_without_starttls_is_never_sent_the_password_nor_the_mail(demo, runtime, trusted, scheme):
    # A plain relay that offers no STARTTLS and would take AUTH in clear: with a user on the URL, or STARTTLS asked
    # for, nothing goes to it, the password least of all.
    for plain in serving(login=(USER, PASSWORD)):
        runtime.settings = runtime.settings.model_copy(
            update={"smtp_url": f"{scheme}://{USERINFO}@127.0.0.1:{plain.port}"}
        )
        await queue_one(runtime, demo)
        await MailDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock).round()
        assert plain.mailbox.messages() == [] and plain.mailbox.logins == []
        row, tried = await the_mail(runtime)
        assert row.status == "pending" and [(o, c) for o, c, _ in tried] == [("retry", None)]
