"""What every way of signing in ends with: a new access token for a user, and the actor it stands for."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.user_agents import MAX_DEVICE_CHARS, SessionDevice
from doctordesk.domain.errors import Unauthorized
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.roles import Actor, Role
from doctordesk.store.tables import AccessToken, Patient, User

# The event on which every instance drops a revoked token from its cache and closes its streams.
TOKEN_REVOKED = EventKind.TOKEN_REVOKED
# The event on which the user's open security pages are rendered again.
SECURITY_CHANGED = EventKind.ACCOUNT_SECURITY_CHANGED


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def actor_for(session: AsyncSession, user: User, token_id: int | None) -> Actor:
    patient_id = None
    if user.role == Role.PATIENT:
        patient_id = await session.scalar(select(Patient.id).where(Patient.user_id == user.id))
    return Actor(
        user_id=user.id,
        username=user.username,
        role=Role(user.role),
        display_name=user.display_name,
        token_id=token_id,
        patient_id=patient_id,
        language=user.language,
    )


async def issue_token(
    session: AsyncSession,
    user: User,
    *,
    now: datetime,
    ttl_seconds: int,
    second_factor: bool,
    device: SessionDevice | None,
) -> tuple[str, Actor]:
    """A new bearer token for ``user`` (its SHA-256 stored) and the actor behind it. The sign-in is its holder's
    proof of who they are (``second_factor``: the proof included one), until ``DOCTORDESK_REAUTH_SECONDS`` pass.
    ``device``: what signed in, as ``user_agents.describe`` found it (None: not known)."""
    token = secrets.token_urlsafe(32)
    expires_at = now + timedelta(seconds=ttl_seconds)
    row = AccessToken(
        token_hash=token_hash(token),
        user_id=user.id,
        created_at=now,
        expires_at=expires_at,
        authenticated_at=now,
        second_factor=second_factor,
        device_client=device.client[:MAX_DEVICE_CHARS] if device and device.client else None,
        device_system=device.system[:MAX_DEVICE_CHARS] if device and device.system else None,
    )
    session.add(row)
    await session.flush()
    return token, await actor_for(session, user, row.id)


async def stamp(session: AsyncSession, token_id: int | None, *, now: datetime | None, second_factor: bool) -> None:
    """Record a new proof of who the holder of a token is (``now``; None: only ``second_factor``, as when they
    turned a factor on with it). A token already holding a second factor's proof keeps it."""
    if token_id is None:
        raise Unauthorized()
    values: dict[str, object] = {}
    if now is not None:
        values["authenticated_at"] = now
    if second_factor:
        values["second_factor"] = True
    if values:
        await session.execute(
            update(AccessToken)
            .where(AccessToken.id == token_id, AccessToken.revoked_at.is_(None))
            .values(**values)
            .execution_options(synchronize_session=False)
        )
