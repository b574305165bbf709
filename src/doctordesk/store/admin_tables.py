"""Administration tables: per-doctor settings the core profile lacks, dated work-hours exceptions, and the audit
trail's read indexes (migration admin_0001).

Nothing here is hard-deleted: an exception that no longer applies is marked ``removed_at``.
"""

from __future__ import annotations

from datetime import date, datetime, time

from sqlalchemy import Boolean, Date, ForeignKey, Index, String, Time
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import AuditLog, Base, BigId


class DoctorSettings(Base):
    """Settings an admin keeps per doctor beside ``doctor_profiles``: whether chat is enabled for the doctor's
    appointments (absent row: enabled)."""

    __tablename__ = "doctor_settings"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    chat_enabled: Mapped[bool] = mapped_column(Boolean, default=True)


class WorkHoursException(Base):
    """A dated exception to a doctor's weekly hours, on a local date of the location (all the doctor's locations
    when ``location_id`` is null). ``kind``: holiday (no hours that day), absence (no hours that day, or only
    between ``start_time`` and ``end_time`` when given) or extra (hours ``start_time``-``end_time`` added that
    day)."""

    __tablename__ = "work_hours_exceptions"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    location_id: Mapped[int | None] = mapped_column(ForeignKey("locations.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    kind: Mapped[str] = mapped_column(String(16))
    start_time: Mapped[time | None] = mapped_column(Time)
    end_time: Mapped[time | None] = mapped_column(Time)
    note: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime]
    removed_at: Mapped[datetime | None]
    __table_args__ = (Index("ix_work_hours_exceptions_doctor_day", "doctor_id", "day"),)


class PasswordLink(Base):
    """A one-time link through which a user sets their own password (migration admin_0003). Only the SHA-256 of
    the link's token is kept. A link is spent when used, and void when a newer link for the user is made; rows
    stay (the audit refers to them)."""

    __tablename__ = "password_links"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    voided_at: Mapped[datetime | None]


# The audit trail's list and export read one index range in (at, id) order, overall or per actor.
Index("ix_audit_log_at_id", AuditLog.at, AuditLog.id)
Index("ix_audit_log_actor_at_id", AuditLog.actor_id, AuditLog.at, AuditLog.id)

__all__ = ["DoctorSettings", "PasswordLink", "WorkHoursException"]


class ClinicSetting(Base):
    """The clinic's own settings (docs/administration.md#clinic-settings; migration ``clinic_0001``): one row per
    setting, its value as text, who changed it last and when. A setting without a row has its default (for
    reminders the server's settings, docs/operations.md); features add their settings by name, without a
    migration."""

    __tablename__ = "clinic_settings"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(500))
    updated_at: Mapped[datetime]
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
