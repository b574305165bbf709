"""Real-time tables: single-use stream tickets, push devices and the push outbox."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class StreamTicket(Base):
    """A short-lived, single-use ticket that opens one SSE stream for an access token (browsers' EventSource cannot
    send headers). Stored as a SHA-256, so any instance can redeem it and a leaked database row is useless."""

    __tablename__ = "stream_tickets"
    ticket_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_id: Mapped[int] = mapped_column(ForeignKey("access_tokens.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    expires_at: Mapped[datetime] = mapped_column(index=True)
    used_at: Mapped[datetime | None]


class Device(Base):
    """A phone or tablet of the app: its latest push token and the user last active on it (only that user is
    notified on it)."""

    __tablename__ = "devices"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    device_key: Mapped[str] = mapped_column(String(128), unique=True)
    platform: Mapped[str] = mapped_column(String(8))
    push_token: Mapped[str | None] = mapped_column(String(512))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    last_active_at: Mapped[datetime]
    token_updated_at: Mapped[datetime]


class PushOutbox(Base):
    """One notification for one device, written in the transaction of the change that caused it and sent by the
    dispatcher. ``notification_id`` is stable across retries so the partner can drop duplicates."""

    __tablename__ = "push_outbox"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    notification_id: Mapped[str] = mapped_column(String(36), unique=True)
    device_id: Mapped[int] = mapped_column(ForeignKey("devices.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    text: Mapped[str | None] = mapped_column(Text)
    data: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    next_attempt_at: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # pending → sent | dropped (token invalid or removed, or attempts exhausted)
    status: Mapped[str] = mapped_column(String(8), default="pending")
    sent_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(String(300))

    __table_args__ = (Index("ix_push_outbox_due", "status", "next_attempt_at"),)


class RelayedEvent(Base):
    """An event of a process without the bus (the bulk import), kept until a serving process publishes it on its bus
    (``realtime/relay.py``): ``topics`` one per line."""

    __tablename__ = "relayed_events"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    topics: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
