"""The mail outbox: one row per mail to a patient, written in the transaction of the change it tells of, and the
log of every attempt to hand it to the relay (docs/notifications.md#sending).

Reminders (docs/notifications.md#reminders; migration ``reminders_0001``): ``reminders_sent``, one row per
reminder that went, keyed by the appointment, the start it was for and its window (hours): unique, and written in
the transaction that queues the reminder's mail and push, so a reminder goes at most once, across restarts and
several senders; a moved appointment has a new start, so its reminders are due again. ``reminder_links``: the
links in a reminder ("I will come", "I need to cancel"), only the SHA-256 of their token kept, usable once until
the appointment's start. ``appointment_confirmations``: the patient said they will come, for one start of the
appointment (a moved appointment is unconfirmed again)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class MailMessage(Base):
    """A mail: the whole message as it goes out (headers, text, HTML, calendar part), built when the change
    commits, so a retry sends the very same bytes under the same ``Message-ID``.

    ``event_key`` names the change (``approved:17:3``: what, which appointment, which version): unique, so one
    change is never queued twice. States: pending → sending (the relay has the envelope; the content goes next)
    → sent | failed (refused for good, or attempts exhausted) | unknown (the sender died after handing the content
    over and before the relay's answer was recorded: it is not sent again)."""

    __tablename__ = "mail_messages"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(200), unique=True)
    event_key: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(32))
    appointment_id: Mapped[int | None] = mapped_column(ForeignKey("appointments.id", ondelete="SET NULL"))
    patient_id: Mapped[int | None] = mapped_column(ForeignKey("patients.id", ondelete="SET NULL"))
    recipient: Mapped[str] = mapped_column(String(254))
    content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    handed_over_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    last_attempt_at: Mapped[datetime | None]
    last_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(300))

    __table_args__ = (
        Index("ix_mail_messages_due", "status", "next_attempt_at"),
        Index("ix_mail_messages_appointment", "appointment_id", "id"),
    )


class MailAttempt(Base):
    """One attempt at handing a mail to the relay, with its outcome: sent, retry (a 4xx or no connection),
    failed (a 5xx, or the last attempt) or unknown (found cut off after the hand-over)."""

    __tablename__ = "mail_attempts"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    mail_id: Mapped[int] = mapped_column(ForeignKey("mail_messages.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime]
    outcome: Mapped[str] = mapped_column(String(10))
    code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(String(300))


# --- reminders (docs/notifications.md#reminders; migration reminders_0001) -------------------------------


class ReminderSent(Base):
    __tablename__ = "reminders_sent"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"))
    start_at: Mapped[datetime]
    hours: Mapped[int] = mapped_column(Integer)
    sent_at: Mapped[datetime]
    __table_args__ = (UniqueConstraint("appointment_id", "start_at", "hours"),)


class ReminderLink(Base):
    __tablename__ = "reminder_links"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(16))  # "confirm" or "cancel"
    start_at: Mapped[datetime]
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class AppointmentConfirmation(Base):
    __tablename__ = "appointment_confirmations"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"))
    start_at: Mapped[datetime]
    confirmed_at: Mapped[datetime]
    __table_args__ = (
        UniqueConstraint("appointment_id", "start_at"),
        Index("ix_appointment_confirmations_appointment", "appointment_id", "start_at"),
    )


# --- staff's own mail (docs/notifications.md#staff-mail; migration staffmail_0001) ---------------------------


class StaffMailSetting(Base):
    """Where a doctor or support member wants the clinic's mail, and for which changes: one row per user (the
    address is the user's own; an admin may set it for them). No row, or no address: no mail."""

    __tablename__ = "staff_mail_settings"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    email: Mapped[str | None] = mapped_column(String(254))
    new_request: Mapped[bool] = mapped_column(Boolean, default=False)
    canceled_by_patient: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime]
