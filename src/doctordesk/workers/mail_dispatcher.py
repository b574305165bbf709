"""The mail sender: claims due mails from the outbox and hands them to the clinic's SMTP relay with ``aiosmtplib``,
one connection per round, recording each attempt (docs/notifications.md#sending).

Per mail: the envelope first (MAIL FROM, RCPT TO), then the row is marked handed over, then the content (DATA).
A refusal of the envelope or the content is the relay's answer, so nothing was delivered: a 4xx comes back later
(backoff, up to ``mail_max_attempts``), a 5xx fails the mail for good. A connection lost while the content is
on its way leaves the outcome unknown: the mail is not sent again (at most once; the stable Message-ID lets an
admin find it in the relay's log).

Each new state (sent, failed, unknown, due again) is published after it commits (``outbox.changed_event``), so an
admin's open Mail screen follows the sender as it works.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

import aiosmtplib

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.mail.relay import Relay, parse_relay
from doctordesk.realtime.lease import DrainLoop, backoff
from doctordesk.services.mail import outbox
from doctordesk.services.mail.compose import sender_domain
from doctordesk.services.mail.outbox import Due, Outcome
from doctordesk.store.db import Database

log = logging.getLogger(__name__)

Publish = Callable[[list[DomainEvent]], Awaitable[None]]


class MailDispatcher(DrainLoop):
    name = "mail-dispatcher"

    def __init__(self, db: Database, *, settings: Settings, clock: Clock, on_changed: Publish | None = None) -> None:
        super().__init__(poll_seconds=settings.mail_poll_seconds)
        self.db = db
        self.settings = settings
        self.clock = clock
        self.on_changed = on_changed  # told of each committed change of a mail's state (None: nobody follows)
        self.relay: Relay = parse_relay(settings.smtp_url)

    def _client(self) -> aiosmtplib.SMTP:
        r = self.relay
        return aiosmtplib.SMTP(
            hostname=r.host,
            port=r.port,
            username=r.username,
            password=r.password,
            use_tls=r.implicit_tls,
            start_tls=r.starttls,
            timeout=self.settings.mail_timeout_seconds,
            # The name it greets the relay with (EHLO): the sender's domain, as in the Message-IDs. Left unset,
            # aiosmtplib asks the resolver for this machine's name on every round (seconds where it is slow).
            local_hostname=sender_domain(self.settings.mail_from),
        )

    async def round(self) -> bool:
        """One claim–send–settle round; True when it found work (there may be more)."""
        s = self.settings
        due, cut_off = await outbox.claim(
            self.db, now=self.clock.now(), limit=s.mail_batch_size, lease_seconds=s.mail_lease_seconds
        )
        if cut_off:
            await self._changed()
        if not due:
            return False
        smtp = self._client()
        try:
            await smtp.connect()
        except (aiosmtplib.SMTPException, OSError) as exc:
            code = exc.code if isinstance(exc, aiosmtplib.SMTPResponseException) else None
            for d in due:
                await self._refused(d, code, f"no connection to the relay: {exc}")
            return True
        try:
            for d in due:
                if self.stopping:
                    break  # the rest come due again when their lease ends
                await self._send(smtp, d)
        finally:
            try:
                await smtp.quit()
            except (aiosmtplib.SMTPException, OSError):
                smtp.close()
        return True

    async def _send(self, smtp: aiosmtplib.SMTP, d: Due) -> None:
        try:
            await smtp.mail(self.settings.mail_from)
            await smtp.rcpt(d.recipient)
        except aiosmtplib.SMTPResponseException as exc:
            await self._refused(d, exc.code, exc.message)
            await _reset(smtp)
            return
        if not await outbox.hand_over(self.db, d, now=self.clock.now()):
            await _reset(smtp)
            return
        try:
            await smtp.data(d.content.encode())
        except aiosmtplib.SMTPResponseException as exc:
            # The relay refused the content: it has not taken the mail, so another attempt cannot duplicate it.
            await self._refused(d, exc.code, exc.message)
            return
        except (aiosmtplib.SMTPException, OSError) as exc:
            log.warning("mail %s: the relay's answer to the content was lost (%s); not sent again", d.id, exc)
            await self._settle(Outcome(d, outbox.UNKNOWN, error=str(exc)))
            raise
        await self._settle(Outcome(d, outbox.SENT, code=250))

    async def _settle(self, result: Outcome) -> None:
        if await outbox.settle(self.db, result, now=self.clock.now()):
            await self._changed()

    async def _changed(self) -> None:
        if self.on_changed is None:
            return
        try:
            await self.on_changed([outbox.changed_event()])
        except Exception:  # the mail's state is committed; a screen catches up at its next poll anyway
            log.exception("mail: telling the open screens of a change failed")

    async def _refused(self, d: Due, code: int | None, error: str) -> None:
        now = self.clock.now()
        s = self.settings
        if (code is not None and code >= 500) or d.lease >= s.mail_max_attempts:
            result = Outcome(d, outbox.FAILED, code=code, error=error)
        else:
            delay = backoff(d.lease, base=s.mail_backoff_seconds, cap=s.mail_backoff_max_seconds, asked=None)
            result = Outcome(d, "retry", code=code, error=error, retry_at=now + timedelta(seconds=delay))
        log.info("mail %s not sent (%s %s): %s", d.id, code, error, result.outcome)
        await self._settle(result)


async def _reset(smtp: aiosmtplib.SMTP) -> None:
    try:
        await smtp.rset()
    except (aiosmtplib.SMTPException, OSError):
        pass
