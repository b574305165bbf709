"""Webhook tables: the endpoints admins register, the outbox of deliveries (which is also each endpoint's delivery
log), and the notices the service leaves for admins (an endpoint disabled after failing for too long).

A FHIR Subscription (``store/fhir_tables.py``) is delivered through the same tables: its channel is an endpoint
row of kind ``fhir-subscription`` (never shown to the admin webhook API), its notifications are deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.secrets.encryption import EncryptedText
from doctordesk.store.tables import Base, BigId


class WebhookEndpoint(Base):
    """A receiver of events. Never deleted (its deliveries are the log): disabled instead, with the reason and
    time. ``secret`` is the ``whsec_`` signing secret (encrypted: signing reads it back); after a rotation the
    previous secret also signs until ``previous_secret_until``, so receivers can switch without a gap."""

    __tablename__ = "webhook_endpoints"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    # "webhook" (registered by an admin) or "fhir-subscription" (the channel of a FHIR Subscription).
    kind: Mapped[str] = mapped_column(String(20), default="webhook", server_default="webhook")
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str] = mapped_column(String(500), default="")
    # Event types this endpoint receives (a JSON list of names from docs/webhooks.md).
    event_types: Mapped[list[str]] = mapped_column(JSON, default=list)
    include_content: Mapped[bool] = mapped_column(Boolean, default=False)
    secret: Mapped[str] = mapped_column(EncryptedText())
    previous_secret: Mapped[str | None] = mapped_column(EncryptedText())
    previous_secret_until: Mapped[datetime | None]
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_at: Mapped[datetime | None]
    disabled_reason: Mapped[str | None] = mapped_column(String(300))
    # The service's reason as a template and values (domain/texts.py), shown in the reader's language; None for a
    # reason an admin typed (shown as typed) and for rows from before it existed.
    disabled_message: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Since when every delivery attempt has failed (None after any success): the disabling rule reads it.
    failing_since: Mapped[datetime | None]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class WebhookDelivery(Base):
    """One event for one endpoint: the exact JSON body that is signed, its stable ``message_id`` (the
    ``webhook-id`` header, the same on every retry and replay) and the state of its delivery."""

    __tablename__ = "webhook_deliveries"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(40), unique=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)
    # What a FHIR Subscription's notification is about (``Appointment/17``): a payload is PUT to the endpoint
    # (the receiver's FHIR base) under this path. None for webhooks.
    subject: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime]
    # pending → delivered | failed (attempts exhausted, or the endpoint answered 410 Gone); a replay makes it
    # pending again.
    status: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    delivered_at: Mapped[datetime | None]
    last_attempt_at: Mapped[datetime | None]
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(300))
    replays: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_endpoint", "endpoint_id", "id"),
    )


class AdminNotice(Base):
    """Something admins should know that no request of theirs caused (e.g. a webhook endpoint was disabled)."""

    __tablename__ = "admin_notices"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(index=True)
    kind: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(String(1000))
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
