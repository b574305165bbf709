"""The doctors' calendar feeds (migration calendar_0001): one row per feed address ever made.

A doctor has at most one live feed (``revoked_at`` null): a partial unique index holds that even when two
requests race; rotating revokes the live row and adds a new one. Rows are never deleted, so the audit log can
always name them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class CalendarFeed(Base):
    """A feed address: the SHA-256 of its secret (looked up on every fetch through the unique index), the first
    characters of the secret (to tell addresses apart), who made it and when, and when it was revoked."""

    __tablename__ = "calendar_feeds"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    revoked_at: Mapped[datetime | None]
    last_fetched_at: Mapped[datetime | None]
    __table_args__ = (
        Index(
            "ix_calendar_feeds_live",
            "doctor_id",
            unique=True,
            postgresql_where=text("revoked_at IS NULL"),
            sqlite_where=text("revoked_at IS NULL"),
        ),
    )


__all__ = ["CalendarFeed"]
