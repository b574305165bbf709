"""In-app notices: what a person was told about their appointments (a patient answered the offers, the doctor
decided, the clinic canceled), shown at the top of their appointment list until they dismiss it. The same text
goes out as a push notification; the notice is what the web app shows, and it survives a missed push.

``message`` is the text's template and values (``domain/texts.py``), so the reader sees it in their own language
whenever they read it; ``text`` is its English, the only form of rows written before ``message`` existed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class UserNotice(Base):
    __tablename__ = "user_notices"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    appointment_id: Mapped[int | None] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(String(500))
    message: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime]
    dismissed_at: Mapped[datetime | None]

    # The list reads a user's newest undismissed notices.
    __table_args__ = (Index("ix_user_notices_open", "user_id", "dismissed_at", "id"),)
