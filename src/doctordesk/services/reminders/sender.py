"""Sending reminders (docs/notifications.md#reminders): a periodic round over the approved appointments starting
soon; for each whose reminder is due now (``domain/reminders.due_window``), one transaction writes the reminder's
row (unique per appointment, start and window: at most once, across restarts and several senders), its two links,
its mail (the mail outbox) and its push (the push outbox).

Computed from the appointments on every round, nothing scheduled ahead: a moved appointment is found at its new
start (its reminders are keyed by it), a canceled one is no longer approved, a changed setting counts at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import and_, or_, select
from sqlalchemy.exc import IntegrityError

from doctordesk.config import Settings
from doctordesk.domain import reminders
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.mail import notices
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.realtime import outbox as push_outbox
from doctordesk.realtime.message import TIMEOUT_ONLY
from doctordesk.services.clinic import settings as clinic_settings
from doctordesk.services.mail import outbox as mail_outbox
from doctordesk.services.reminders import links
from doctordesk.services.uow import worker_transaction
from doctordesk.store.db import Database
from doctordesk.store.mail_tables import ReminderSent
from doctordesk.store.tables import Appointment, Location, Patient

BATCH = 200
PUSH_TEXT = N_("Reminder: your appointment on {when}. Will you come?")


@dataclass(frozen=True, slots=True)
class Candidate:
    appointment_id: int
    start: datetime
    timezone: str
    patient_user_id: int | None


async def _candidates(
    db: Database, rules: reminders.ReminderRules, *, now: datetime, after: tuple[datetime, int] | None
) -> tuple[list[tuple[Candidate, int]], tuple[datetime, int] | None]:
    """Of the next ``BATCH`` approved appointments starting soon (in start order, past ``after``), those whose
    reminder is due now, with its window; and where the next batch starts (None: this was the last)."""
    until = now + reminders.horizon(rules)
    beyond = (
        or_(Appointment.start_at > after[0], and_(Appointment.start_at == after[0], Appointment.id > after[1]))
        if after is not None
        else Appointment.start_at > now
    )
    async with db.read() as session:
        rows = (
            await session.execute(
                select(Appointment.id, Appointment.start_at, Location.timezone, Patient.user_id)
                .join(Location, Location.id == Appointment.location_id)
                .join(Patient, Patient.id == Appointment.patient_id)
                .where(
                    Appointment.status == int(Status.APPROVED),
                    Appointment.start_at > now,
                    Appointment.start_at <= until,
                    beyond,
                )
                .order_by(Appointment.start_at, Appointment.id)
                .limit(BATCH)
            )
        ).all()
        found = [Candidate(*row) for row in rows]
        ids = sorted({c.appointment_id for c in found})
        sent: dict[tuple[int, datetime], set[int]] = {}
        if ids:
            done = await session.execute(
                select(ReminderSent.appointment_id, ReminderSent.start_at, ReminderSent.hours).where(
                    ReminderSent.appointment_id.in_(ids)
                )
            )
            for appointment_id, start, hours in done.all():
                sent.setdefault((appointment_id, start), set()).add(hours)
    due = []
    for c in found:
        window = reminders.due_window(
            rules, start=c.start, now=now, zone=ZoneInfo(c.timezone),
            sent=frozenset(sent.get((c.appointment_id, c.start), ())),
        )  # fmt: skip
        if window is not None:
            due.append((c, window))
    last = (found[-1].start, found[-1].appointment_id) if len(found) == BATCH else None
    return due, last


async def send_due(db: Database, settings: Settings, *, now: datetime) -> list[DomainEvent]:
    """Send every reminder due at ``now``; the "queued" events that wake the mail and push senders (empty: none
    went)."""
    async with db.read() as session:
        rules = clinic_settings.reminder_rules(await clinic_settings.values(session, settings))
    if not rules.enabled:
        return []
    mailed = pushed = False
    after: tuple[datetime, int] | None = None
    while True:  # batch after batch: a busy clinic's appointments of the next days are more than one
        due, after = await _candidates(db, rules, now=now, after=after)
        for candidate, window in due:
            try:
                m, p = await _send(db, settings, candidate, window, now=now)
            except IntegrityError:
                continue  # another sender took this reminder meanwhile
            mailed, pushed = mailed or m, pushed or p
        if after is None:
            break
    wake = [mail_outbox.QUEUED_EVENT] if mailed else []
    wake += [push_outbox.QUEUED_EVENT] if pushed else []
    return [DomainEvent(kind, topics=()) for kind in wake]


async def _send(db: Database, settings: Settings, c: Candidate, window: int, *, now: datetime) -> tuple[bool, bool]:
    async with worker_transaction(db) as session:
        session.add(ReminderSent(appointment_id=c.appointment_id, start_at=c.start, hours=window, sent_at=now))
        await session.flush()  # the unique key: a second sender stops here
        issued = links.issue(session, c.appointment_id, start=c.start, now=now)
        base = settings.link_base
        event = DomainEvent(
            notices.REMINDER_EVENT,
            topics=(),
            data={
                "appointment_id": c.appointment_id,
                "mail_key": f"reminder:{c.appointment_id}:{int(c.start.timestamp())}:{window}",
                "links": [
                    (notices.LINK_CONFIRM, links.url(base, issued[links.CONFIRM])),
                    (notices.LINK_CANCEL, links.url(base, issued[links.CANCEL])),
                ],
            },
            notify_user_ids=(c.patient_user_id,) if c.patient_user_id is not None else (),
            notify_text=Text(PUSH_TEXT, when=Moment(c.start, c.timezone)),
        )
        mailed = bool(settings.smtp_url) and bool(
            await mail_outbox.enqueue(session, [event], now=now, sender=settings.mail_from)
        )
        pushed = bool(await push_outbox.enqueue(session, [event], now=now, data_for=_timeout_only))
    return mailed, pushed


def _timeout_only(_event: DomainEvent, _device: object) -> str:
    return str(TIMEOUT_ONLY)
