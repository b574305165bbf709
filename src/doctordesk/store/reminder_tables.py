"""Reminders (docs/notifications.md#reminders; migration ``reminders_0001``).

``reminders_sent``: one row per reminder that went, keyed by the appointment, the start it was for and its
window (hours): unique, and written in the transaction that queues the reminder's mail and push, so a reminder
goes at most once, across restarts and several senders; a moved appointment has a new start, so its reminders
are due again. ``reminder_links``: the links in a reminder ("I will come", "I need to cancel"), only the
SHA-256 of their token kept, usable once until the appointment's start. ``appointment_confirmations``: the
patient said they will come, for one start of the appointment (a moved appointment is unconfirmed again)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


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
