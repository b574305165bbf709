"""The mail outbox (docs/notifications.md#sending): mails written in the transaction of the change they tell of,
leased by senders, marked as handed over before their content goes to the relay, and settled with the relay's
answer, every attempt logged.

Never twice: a mail whose content may have reached the relay (marked ``sending``) is never offered again. A sender
killed between the relay's acceptance and the record of it leaves the row ``sending``; once its lease has run out
the next claim marks it ``unknown`` (not sent again; an admin notice says so). A sender killed before the mark
leaves the row ``pending``: the relay has at most an unfinished transaction, which it drops, and the mail is
retried under the same Message-ID when the lease ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import ADMIN_TOPIC, DomainEvent
from doctordesk.domain.mail import notices
from doctordesk.domain.mail.notices import STAFF_KINDS, MailKind, kind_for, staff_kind_for
from doctordesk.domain.scheduling.booking import VISIT_MINUTES
from doctordesk.domain.texts import Moment, Text, to_json
from doctordesk.domain.waitlist.rules import Mode
from doctordesk.i18n import DEFAULT
from doctordesk.realtime.lease import lease_due
from doctordesk.services.mail.compose import MailFacts, appointment_facts, compose
from doctordesk.services.mail.staff import staff_facts
from doctordesk.services.uow import worker_transaction
from doctordesk.store.db import Database
from doctordesk.store.mail_tables import MailAttempt, MailMessage
from doctordesk.store.tables import Appointment, Location, Patient, User
from doctordesk.store.webhook_tables import AdminNotice

PENDING, SENDING, SENT, FAILED, UNKNOWN = "pending", "sending", "sent", "failed", "unknown"
# The admin notice of a mail that was refused for good, ran out of attempts, or whose outcome is unknown.
MAIL_NOT_SENT = "mail.not-sent"
# The domain event a transaction emits when it queued mail: it wakes the senders.
QUEUED_EVENT = EventKind.MAIL_QUEUED
# A mail's state changed (sent, failed, unknown, due again): the administration's Mail screen follows the admin topic.
CHANGED_EVENT = EventKind.MAIL_CHANGED


def changed_event() -> DomainEvent:
    """What the sender publishes after a mail's new state has committed: every admin's open Mail screen (and the
    notices it may have left) catches up on its next poll or real-time update."""
    return DomainEvent(CHANGED_EVENT, topics=(ADMIN_TOPIC,))


async def _facts(session: AsyncSession, event: DomainEvent) -> MailFacts | None:
    appointment_id = event.data.get("appointment_id")
    if not isinstance(appointment_id, int):
        return None
    doctor = User.__table__.alias("doctor")
    row = (
        await session.execute(
            select(Appointment, Patient.name, Patient.email, User.language, doctor.c.display_name, Location)
            .join(Patient, Patient.id == Appointment.patient_id)
            .outerjoin(User, User.id == Patient.user_id)
            .join(doctor, doctor.c.id == Appointment.doctor_id)
            .join(Location, Location.id == Appointment.location_id)
            .where(Appointment.id == appointment_id)
        )
    ).first()
    if row is None or not row[2]:
        return None  # gone, or the patient has no address: no mail
    a, patient_name, email, language, doctor_name, location = row
    reason = a.decline_reason if event.kind == EventKind.APPOINTMENT_DECLINE else None
    return appointment_facts(
        a,
        location,
        patient_name=patient_name,
        doctor_name=doctor_name,
        recipient=email,
        language=language,
        reason=reason,
        links=tuple((str(words), str(url)) for words, url in event.data.get("links", ())),
    )


async def _offer_facts(session: AsyncSession, event: DomainEvent) -> MailFacts | None:
    """A waitlist offer's mail (docs/waitlist.md): the patient, the doctor, the place and the time offered."""
    data = event.data
    doctor = User.__table__.alias("doctor")
    row = (
        await session.execute(
            select(Patient.name, Patient.email, User.language, doctor.c.display_name, Location)
            .outerjoin(User, User.id == Patient.user_id)
            .join(doctor, doctor.c.id == data["doctor_id"])
            .join(Location, Location.id == data["location_id"])
            .where(Patient.id == data["patient_id"])
        )
    ).first()
    if row is None or not row[1]:
        return None
    patient_name, email, language, doctor_name, location = row
    if data.get("mode") == Mode.ALL_AT_ONCE:
        lasts = Text(notices.OFFER_TO_ALL)
    else:
        lasts = Text(notices.OFFER_UNTIL, until=Moment(datetime.fromisoformat(data["expires_at"]), location.timezone))
    return MailFacts(
        appointment_id=0,
        patient_id=data["patient_id"],
        version=0,
        patient_name=patient_name,
        recipient=email,
        language=language or DEFAULT,
        doctor_name=doctor_name,
        location_name=location.name,
        location_address=location.address,
        timezone=location.timezone,
        start=datetime.fromisoformat(data["start"]),
        duration_minutes=VISIT_MINUTES,  # a freed time is one visit's length (services/waitlist/matching.py)
        service=data.get("service", ""),
        about=f"offer:{data['offer_id']}",
        notes=(lasts,),
    )


async def enqueue(session: AsyncSession, events: Sequence[DomainEvent], *, now: datetime, sender: str) -> int:
    """A mail for each event that mails its patient (``domain/mail/notices.kind_for``) and whose patient has an
    address, and one for each that mails its doctor who chose it (``staff_kind_for``), composed now and written in
    the caller's transaction; how many."""
    rows: list[dict[str, Any]] = []
    with session.no_autoflush:
        for event in events:
            for kind in _kinds(event):
                await session.flush()  # the change's rows, as the mail describes them
                facts = await _facts_of(session, event, kind)
                if facts is not None:
                    rows.append(_row(event, kind, facts, sender=sender, now=now))
    if rows:
        await session.execute(insert(MailMessage), rows)
    return len(rows)


def mails_for(event: DomainEvent) -> bool:
    """Whether ``event`` may mail anyone (its patient or its doctor)."""
    return bool(_kinds(event))


def _kinds(event: DomainEvent) -> list[MailKind]:
    return [k for k in (kind_for(event.kind, event.data), staff_kind_for(event.kind, event.data)) if k is not None]


async def _facts_of(session: AsyncSession, event: DomainEvent, kind: MailKind) -> MailFacts | None:
    if kind in STAFF_KINDS:
        return await staff_facts(session, event, kind)
    if kind is MailKind.WAITLIST_OFFER:
        return await _offer_facts(session, event)
    return await _facts(session, event)


def _row(event: DomainEvent, kind: MailKind, facts: MailFacts, *, sender: str, now: datetime) -> dict[str, Any]:
    message_id, content = compose(facts, kind, sender=sender, now=now)
    return {
        "message_id": message_id,
        # A reminder names its own change (its window and the start), a waitlist offer the offer
        # (``facts.about``); any other mail the appointment and its version.
        "event_key": (event.data.get("mail_key") if kind not in STAFF_KINDS else None)
        or f"{kind}:{facts.about or f'{facts.appointment_id}:{facts.version}'}",
        "kind": kind.value,
        "appointment_id": facts.appointment_id or None,
        "patient_id": facts.patient_id,
        "recipient": facts.recipient,
        "content": content,
        "created_at": now,
        "status": PENDING,
        "attempts": 0,
        "next_attempt_at": now,
    }


@dataclass(frozen=True, slots=True)
class Due:
    """A leased mail: ``lease`` is its attempts as the claim left them (an outcome is recorded only under it)."""

    id: int
    message_id: str
    recipient: str
    content: str
    lease: int


async def claim(db: Database, *, now: datetime, limit: int, lease_seconds: float) -> tuple[list[Due], int]:
    """Mark the mails cut off after their hand-over ``unknown``, then lease up to ``limit`` due ones; the leased
    mails and how many were marked ``unknown``."""
    table = cast(Table, MailMessage.__table__)
    async with worker_transaction(db) as session:
        cut_off = (
            await session.execute(
                update(table)
                .where(table.c.status == SENDING, table.c.next_attempt_at <= now)
                .values(status=UNKNOWN, last_attempt_at=now, last_error="the sender stopped after the hand-over")
                .returning(table.c.id, table.c.recipient, table.c.kind)
            )
        ).all()
        for mail_id, recipient, kind in cut_off:
            _log(session, mail_id, at=now, outcome=UNKNOWN, code=None, error="cut off after the hand-over")
            _notice(session, mail_id, recipient, kind, now=now, why=Text("the sender stopped; it may have been sent"))
        ids = await lease_due(
            session, MailMessage, now=now, limit=limit, lease_seconds=lease_seconds, skip_locked=not db.is_sqlite
        )
        if not ids:
            return [], len(cut_off)
        rows = (
            await session.execute(
                select(table.c.id, table.c.message_id, table.c.recipient, table.c.content, table.c.attempts)
                .where(table.c.id.in_(ids))
                .order_by(table.c.id)
            )
        ).all()
    return [Due(*row) for row in rows], len(cut_off)


async def hand_over(db: Database, due: Due, *, now: datetime) -> bool:
    """Mark ``due`` as handed to the relay (from here on it is never offered again); False when its lease was
    lost meanwhile (another sender has it): then it is not sent."""
    table = cast(Table, MailMessage.__table__)
    async with worker_transaction(db) as session:
        result = await session.execute(
            update(table)
            .where(table.c.id == due.id, table.c.status == PENDING, table.c.attempts == due.lease)
            .values(status=SENDING, handed_over_at=now)
        )
    return bool(cast(Any, result).rowcount == 1)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One attempt's end: ``outcome`` sent, retry (with ``retry_at``), failed or unknown (the content went out, the
    answer was lost); the relay's reply code if any."""

    due: Due
    outcome: str
    code: int | None = None
    error: str | None = None
    retry_at: datetime | None = None


async def settle(db: Database, result: Outcome, *, now: datetime) -> bool:
    """Record an attempt's outcome (while the row still carries this attempt's lease) and log it; False when the
    lease was lost meanwhile (nothing changed)."""
    table = cast(Table, MailMessage.__table__)
    due = result.due
    ours = (table.c.id == due.id) & table.c.status.in_((PENDING, SENDING)) & (table.c.attempts == due.lease)
    common: dict[str, Any] = {"last_attempt_at": now, "last_code": result.code, "last_error": _short(result.error)}
    if result.outcome == SENT:
        values = {**common, "status": SENT, "sent_at": now, "last_error": None}
    elif result.outcome in (FAILED, UNKNOWN):
        values = {**common, "status": result.outcome}
    else:
        assert result.retry_at is not None
        values = {**common, "status": PENDING, "handed_over_at": None, "next_attempt_at": result.retry_at}
    async with worker_transaction(db) as session:
        changed = await session.execute(update(table).where(ours).values(**values).returning(table.c.kind))
        kind = changed.scalar()
        if kind is None:
            return False
        _log(session, due.id, at=now, outcome=result.outcome, code=result.code, error=result.error)
        if result.outcome == FAILED:
            why = Text("the mail server answered {code}: {error}", code=result.code or "-", error=result.error or "")
            _notice(session, due.id, due.recipient, kind, now=now, why=why)
        elif result.outcome == UNKNOWN:
            _notice(session, due.id, due.recipient, kind, now=now, why=Text("the relay's answer was lost"))
    return True


def _short(text: str | None) -> str | None:
    return text[:300] if text else None


def _log(
    session: AsyncSession, mail_id: int, *, at: datetime, outcome: str, code: int | None, error: str | None
) -> None:
    session.add(MailAttempt(mail_id=mail_id, at=at, outcome=outcome, code=code, error=_short(error)))


def _notice(session: AsyncSession, mail_id: int, recipient: str, kind: str, *, now: datetime, why: str) -> None:
    told = Text("A mail to {recipient} ({kind}) was not sent: {why}", recipient=recipient, kind=kind, why=why)
    session.add(
        AdminNotice(
            created_at=now,
            kind=MAIL_NOT_SENT,
            text=told[:1000],
            details={"mail_id": mail_id, "recipient": recipient, "kind": kind, "message": to_json(told)},
        )
    )
