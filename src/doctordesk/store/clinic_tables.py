"""The clinic's own settings (docs/administration.md#clinic-settings): one row per setting, its value as text,
who changed it last and when (migration ``clinic_0001``). A setting without a row has its default (for reminders
the server's settings, docs/operations.md); features add their settings by name, without a migration."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base


class ClinicSetting(Base):
    __tablename__ = "clinic_settings"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(500))
    updated_at: Mapped[datetime]
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
