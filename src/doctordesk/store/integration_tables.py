"""Integration API tables: service accounts, their API keys, the appointment requests they made and the
Idempotency-Keys they sent (migration integ_0001).

Accounts and keys are never deleted: a key is revoked (``revoked_at``), an account deactivated (``active``), so the
audit log and history can always name who acted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class ServiceAccount(Base):
    """A clinic system (booking system, patient portal) that calls the integration API."""

    __tablename__ = "service_accounts"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    description: Mapped[str] = mapped_column(String(500), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class ApiKey(Base):
    """One key of a service account: the SHA-256 of the key, its first characters (to tell keys apart), its
    scopes (a JSON list), when it was last used (at most once a minute) and when it was revoked."""

    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    service_account_id: Mapped[int] = mapped_column(ForeignKey("service_accounts.id"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    label: Mapped[str] = mapped_column(String(100), default="")
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class IntegrationRequest(Base):
    """An appointment created through the integration API: which account asked, and the note it sent."""

    __tablename__ = "integration_requests"
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"), primary_key=True)
    service_account_id: Mapped[int] = mapped_column(ForeignKey("service_accounts.id"))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime]
    __table_args__ = (Index("ix_integration_requests_account", "service_account_id", "appointment_id"),)


class IdempotencyRecord(Base):
    """An Idempotency-Key a service account sent, with the hash of the body and the first answer (status and
    JSON body), kept until ``expires_at``."""

    __tablename__ = "idempotency_records"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    service_account_id: Mapped[int] = mapped_column(ForeignKey("service_accounts.id"))
    key: Mapped[str] = mapped_column(String(128))
    request_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    response: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    __table_args__ = (
        UniqueConstraint("service_account_id", "key", name="uq_idempotency_records_account_key"),
        Index("ix_idempotency_records_expires", "expires_at"),
    )


__all__ = ["ApiKey", "IdempotencyRecord", "IntegrationRequest", "ServiceAccount"]
