"""SMART App Launch tables (migration smart_0001, docs/smart.md): the registered client apps, the authorizations
(a pending consent, then its one-time code), the access and refresh tokens issued, and the key that signs id
tokens. Secrets, codes and tokens are stored as hashes only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.secrets.encryption import EncryptedText
from doctordesk.store.tables import Base, BigId


class SmartClient(Base):
    """An app registered by an admin: its public ``client_id``, kind, the argon2 hash of a confidential client's
    secret, its redirect URIs and allowed scopes (JSON lists). Never deleted: deactivated."""

    __tablename__ = "smart_clients"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str | None] = mapped_column(String(255))
    redirect_uris: Mapped[list[str]] = mapped_column(JSON, default=list)
    allowed_scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    # A backend service's public keys (migration smart_backend_0001): at an address, or given inline (a JWKS).
    jwks_uri: Mapped[str | None] = mapped_column(String(500))
    jwks: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Where a record system sends the browser for an EHR launch of this app (docs/smart.md#ehr-launch).
    launch_url: Mapped[str | None] = mapped_column(String(500))


class SmartAuthorization(Base):
    """One authorization request: created by the authorize endpoint (``ticket_hash``, what the consent page is
    opened with), decided by a signed-in user (``user_id``, the patient in context, the scopes granted and the
    one-time ``code_hash``), redeemed once at the token endpoint (``used_at``)."""

    __tablename__ = "smart_authorizations"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    ticket_hash: Mapped[str] = mapped_column(String(64), unique=True)
    code_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    client_pk: Mapped[int] = mapped_column(ForeignKey("smart_clients.id"), index=True)
    redirect_uri: Mapped[str] = mapped_column(String(500))
    scope: Mapped[str] = mapped_column(Text)
    state: Mapped[str | None] = mapped_column(Text)
    nonce: Mapped[str | None] = mapped_column(String(255))
    code_challenge: Mapped[str] = mapped_column(String(128))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    patient_id: Mapped[int | None] = mapped_column(ForeignKey("patients.id"))
    granted_scope: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    decided_at: Mapped[datetime | None]
    used_at: Mapped[datetime | None]


class SmartToken(Base):
    """An access or refresh token (``kind``) of one grant: its ``family`` is the authorization it came from, so a
    refresh token used twice revokes every token of that grant. ``rotated_at``: a refresh token exchanged for a new
    one."""

    __tablename__ = "smart_tokens"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    family: Mapped[int] = mapped_column(ForeignKey("smart_authorizations.id"), index=True)
    client_pk: Mapped[int] = mapped_column(ForeignKey("smart_clients.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    patient_id: Mapped[int | None] = mapped_column(ForeignKey("patients.id"))
    scope: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    rotated_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class SmartSigningKey(Base):
    """The server's key for id tokens, as a private JWK (JSON, encrypted): made on first use, the oldest row
    signs."""

    __tablename__ = "smart_signing_keys"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    private_jwk: Mapped[str] = mapped_column(EncryptedText())
    created_at: Mapped[datetime]


class SmartSystemToken(Base):
    """A backend service's access token (client credentials, docs/smart.md#backend-services): no user, no refresh
    token; its ``scope`` is the ``system/`` scopes granted."""

    __tablename__ = "smart_system_tokens"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_pk: Mapped[int] = mapped_column(ForeignKey("smart_clients.id"), index=True)
    scope: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class SmartAssertionJti(Base):
    """A client assertion's ``jti`` already used by its client, kept until the assertion's ``exp``: the same one
    again is a replay."""

    __tablename__ = "smart_assertion_jtis"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    client_pk: Mapped[int] = mapped_column(ForeignKey("smart_clients.id"))
    jti: Mapped[str] = mapped_column(String(255))
    expires_at: Mapped[datetime]
    __table_args__ = (
        UniqueConstraint("client_pk", "jti", name="uq_smart_assertion_jtis_client_jti"),
        Index("ix_smart_assertion_jtis_expires", "expires_at"),
    )


class SmartLaunch(Base):
    """An EHR launch value (docs/smart.md#ehr-launch): issued for one app and one patient by an admin or a record
    system's API key, spent by the first authorization request that names it (``used_at``)."""

    __tablename__ = "smart_launches"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    launch_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_pk: Mapped[int] = mapped_column(ForeignKey("smart_clients.id"), index=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id"))
    issued_by_user: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    issued_by_account: Mapped[int | None] = mapped_column(ForeignKey("service_accounts.id"))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
