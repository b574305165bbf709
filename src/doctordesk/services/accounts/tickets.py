"""Single-use sign-in tickets (table ``sign_in_tickets``): a random value handed out once, kept as its SHA-256,
taken at most once before it expires."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.store.mfa_tables import SignInTicket

ENROL = "enrol"
WEBAUTHN = "webauthn"
SSO_STATE = "sso-state"
SSO_HANDOFF = "sso-handoff"
MAX_TICKET_CHARS = 128


def _hash(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


def issue(
    session: AsyncSession,
    kind: str,
    *,
    now: datetime,
    ttl_seconds: int,
    user_id: int | None = None,
    data: dict[str, Any] | None = None,
) -> str:
    """A new ticket of ``kind`` (written with the session's next flush)."""
    ticket = secrets.token_urlsafe(32)
    session.add(
        SignInTicket(
            ticket_hash=_hash(ticket),
            kind=kind,
            user_id=user_id,
            data=data or {},
            created_at=now,
            expires_at=now + timedelta(seconds=ttl_seconds),
        )
    )
    return ticket


async def peek(session: AsyncSession, kind: str, ticket: str | None, *, now: datetime) -> SignInTicket | None:
    """The live ticket (unused, unexpired, of ``kind``) without taking it; None otherwise."""
    if not ticket or len(ticket) > MAX_TICKET_CHARS or not ticket.isascii():
        return None
    row = await session.scalar(select(SignInTicket).where(SignInTicket.ticket_hash == _hash(ticket)))
    if row is None or row.kind != kind or row.used_at is not None or row.expires_at <= now:
        return None
    return row


async def take(session: AsyncSession, kind: str, ticket: str | None, *, now: datetime) -> SignInTicket | None:
    """The live ticket, marked used in the same statement that checks it is still unused (two requests with one
    ticket: one wins); None otherwise."""
    row = await peek(session, kind, ticket, now=now)
    if row is None:
        return None
    taken = await session.execute(
        update(SignInTicket)
        .where(SignInTicket.id == row.id, SignInTicket.used_at.is_(None))
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return row if taken.rowcount == 1 else None  # type: ignore[attr-defined]
