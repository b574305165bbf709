"""Chat tables: one thread per appointment, its messages (never updated or deleted), attachments stored in the
database, and each reader's read position.

Attachments live in the database as bytes so every server instance can serve every file with no shared disk;
the upload limit (``DOCTORDESK_MAX_UPLOAD_BYTES``, 10 MiB) keeps rows reasonable (docs/chat.md).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class ChatThread(Base):
    __tablename__ = "chat_threads"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id"), unique=True)
    created_at: Mapped[datetime]
    last_activity_at: Mapped[datetime]
    last_message_id: Mapped[int | None] = mapped_column(BigInteger)
    __table_args__ = (Index("ix_chat_threads_activity", "last_activity_at"),)


class Attachment(Base):
    """One uploaded file. ``mime`` is the type detected from the bytes; ``filename`` is already made safe."""

    __tablename__ = "chat_attachments"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    uploader_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    filename: Mapped[str] = mapped_column(String(255))
    mime: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]


class ChatMessage(Base):
    """Append-only, like the audit log: a trigger refuses updates and deletes on PostgreSQL and SQLite."""

    __tablename__ = "chat_messages"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    thread_id: Mapped[int] = mapped_column(ForeignKey("chat_threads.id"))
    sender_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    attachment_id: Mapped[int | None] = mapped_column(ForeignKey("chat_attachments.id"))
    # The sender's idempotency key: a retried send finds the message it already created.
    client_message_id: Mapped[str | None] = mapped_column(String(64))
    __table_args__ = (
        Index("ix_chat_messages_thread_order", "thread_id", "created_at", "id"),
        Index("ix_chat_messages_sender_time", "sender_id", "created_at"),
        UniqueConstraint("sender_id", "client_message_id", name="uq_chat_messages_sender_client_id"),
    )


class ChatRead(Base):
    """How far one reader has read one thread (the position of the last message read)."""

    __tablename__ = "chat_reads"
    thread_id: Mapped[int] = mapped_column(ForeignKey("chat_threads.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    message_created_at: Mapped[datetime]
    message_id: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime]
    __table_args__ = (Index("ix_chat_reads_user", "user_id"),)


class ChatDraft(Base):
    """A message one user has begun and not sent, per thread (appointment): kept with the server so it survives a
    reload and follows the user to another device (spec chat rule 2: only the draft state changes). Written as
    the user types, removed when they send or empty the box. Unlike messages, drafts change and go."""

    __tablename__ = "chat_drafts"
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    content: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime]


__all__ = ["Attachment", "ChatDraft", "ChatMessage", "ChatRead", "ChatThread"]
