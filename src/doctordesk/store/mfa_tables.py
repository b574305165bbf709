"""Second factors, sign-in tickets and single sign-on (migration mfa_0001; docs/accounts.md#second-factor).

Secrets that must be read back to be used (a TOTP seed, an OpenID client secret) are stored encrypted
(``EncryptedText``, docs/operations.md#secrets-at-rest); what only needs comparing (recovery codes, tickets) is
stored as its SHA-256.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.secrets.encryption import EncryptedText
from doctordesk.store.tables import Base, BigId


class TotpSecret(Base):
    """A user's authenticator-app seed; on once ``confirmed_at`` is set. ``last_step``: the newest 30-second step
    a code was taken for (a code is not taken twice)."""

    __tablename__ = "totp_secrets"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    secret: Mapped[str] = mapped_column(EncryptedText())
    created_at: Mapped[datetime]
    confirmed_at: Mapped[datetime | None]
    last_step: Mapped[int | None] = mapped_column(BigInteger)


class RecoveryCode(Base):
    """One of a user's one-time recovery codes (SHA-256); ``used_at`` once taken."""

    __tablename__ = "recovery_codes"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    code_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class Passkey(Base):
    """A WebAuthn credential: its id (base64url), COSE public key and signature counter."""

    __tablename__ = "passkeys"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    credential_id: Mapped[str] = mapped_column(String(255), unique=True)
    public_key: Mapped[bytes] = mapped_column(LargeBinary)
    sign_count: Mapped[int] = mapped_column(BigInteger, default=0)
    name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]


class MfaPolicy(Base):
    """Whether a role must sign in with a second factor (absent row: not required)."""

    __tablename__ = "mfa_policy"
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime]
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class SignInTicket(Base):
    """A short-lived, single-use step of a sign-in: ``enrol`` (password right, a factor must be set up first),
    ``webauthn`` (a passkey challenge), ``sso-state`` (an OpenID authorization request in flight) or
    ``sso-handoff`` (an SSO sign-in the web app redeems for a token). Only the ticket's SHA-256 is kept."""

    __tablename__ = "sign_in_tickets"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    ticket_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class SsoProvider(Base):
    """The clinic's OpenID Connect provider: who it is, our client at it, and how its claims map to users."""

    __tablename__ = "sso_providers"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    slug: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(64))
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    client_secret: Mapped[str] = mapped_column(EncryptedText())
    # Which claim finds the user, compared with ``users.username`` or ``users.external_id``.
    match_claim: Mapped[str] = mapped_column(String(64), default="email")
    match_field: Mapped[str] = mapped_column(String(16), default="username")
    role_claim: Mapped[str | None] = mapped_column(String(64))
    role_map: Mapped[dict[str, Any]] = mapped_column(default=dict)
    default_role: Mapped[str | None] = mapped_column(String(16))
    create_users: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class SsoLink(Base):
    """A provider's subject (``sub``) tied to a user at their first sign-in through it."""

    __tablename__ = "sso_links"
    __table_args__ = (UniqueConstraint("provider_id", "subject", name="uq_sso_links_provider_subject"),)
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    provider_id: Mapped[int] = mapped_column(ForeignKey("sso_providers.id", ondelete="CASCADE"))
    subject: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime]
