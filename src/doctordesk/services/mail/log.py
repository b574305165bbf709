"""The mail log for admins: the mails that were not sent (refused, out of attempts, or unknown), and the latest."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.domain.mail.views import MailView
from doctordesk.runtime import Runtime
from doctordesk.services.mail.outbox import FAILED, UNKNOWN
from doctordesk.store.mail_tables import MailMessage

_COLUMNS = (
    MailMessage.id,
    MailMessage.message_id,
    MailMessage.kind,
    MailMessage.recipient,
    MailMessage.appointment_id,
    MailMessage.status,
    MailMessage.attempts,
    MailMessage.created_at,
    MailMessage.last_attempt_at,
    MailMessage.last_code,
    MailMessage.last_error,
)


async def mail_log(rt: Runtime, *, limit: int) -> tuple[list[MailView], list[MailView]]:
    """The newest ``limit`` mails not sent, and the newest ``limit`` of all (the caller checks the admin role)."""
    async with rt.db.read() as session:
        newest = select(*_COLUMNS).order_by(MailMessage.id.desc()).limit(limit)
        not_sent = (await session.execute(newest.where(MailMessage.status.in_((FAILED, UNKNOWN))))).all()
        latest = (await session.execute(newest)).all()
    return [MailView(*r) for r in not_sent], [MailView(*r) for r in latest]
