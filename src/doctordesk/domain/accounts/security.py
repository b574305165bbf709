"""What one's security page shows (docs/accounts.md#security-page), as plain records: the services read them, the
screen draws them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from doctordesk.domain.accounts.user_agents import SessionDevice


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A live access token of the user (``current``: the one this request came with; ``device``: what signed in,
    None when not known)."""

    id: int
    created_at: datetime
    expires_at: datetime
    current: bool
    device: SessionDevice | None


@dataclass(frozen=True, slots=True)
class DeviceRow:
    """A phone registered for push notifications."""

    id: int
    platform: str
    last_active_at: datetime


@dataclass(frozen=True, slots=True)
class PasskeyRow:
    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class PendingTotp:
    """An authenticator app being set up: its key and the ``otpauth://`` URI its QR code carries."""

    secret: str
    uri: str


@dataclass(frozen=True, slots=True)
class ConnectedApp:
    """An app holding live tokens of the user: ``scopes`` granted (every live grant's, together), ``since`` its
    first live token, ``until`` when its last one runs out unless it is refreshed."""

    client_pk: int
    name: str
    client_id: str
    scopes: tuple[str, ...]
    since: datetime
    until: datetime


@dataclass(frozen=True, slots=True)
class Overview:
    sessions: list[SessionRow]
    devices: list[DeviceRow]
    passkeys: list[PasskeyRow]
    totp: bool
    pending: PendingTotp | None
    recovery_left: int
    required: bool
    apps: list[ConnectedApp]
    has_password: bool = True  # False: made by single sign-on or an import, no password yet
