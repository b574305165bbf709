"""One-time password links: instead of a password shown once, an admin makes a link through which the user sets
their own password.

A link carries a random token; only its SHA-256 is stored. It works once, until it expires (``LIFETIME``), and
only while the user is active; making a new link for a user voids their earlier unused ones. Using it sets the
password and signs the user out everywhere, like a reset. Every step is audited (never the token), and rows are
never deleted.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.inputs import check_text
from doctordesk.domain.roles import Actor, require_admin
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import recovery
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD, token_hash
from doctordesk.services.audit.changes import record_change
from doctordesk.services.uow import unit_of_work
from doctordesk.store.admin_tables import PasswordLink
from doctordesk.store.tables import User

LIFETIME = timedelta(hours=24)
TOKEN_BYTES = 32
MAX_TOKEN_CHARS = 128
# The web app's page for a link: the token travels in the fragment, which browsers never send to a server.
WEB_PATH = "/#/set-password/"
INVALID = N_("This link is not valid: it expired, was already used, or was replaced by a newer one.")


@dataclass(frozen=True, slots=True)
class IssuedLink:
    link_id: int
    user_id: int
    token: str
    expires_at: datetime

    def url(self, base: str) -> str:
        return base.rstrip("/") + WEB_PATH + self.token


def _audited(link: PasswordLink) -> dict[str, Any]:
    return {
        "link_id": link.id,
        "user_id": link.user_id,
        "expires_at": link.expires_at.isoformat(),
        "used_at": link.used_at.isoformat() if link.used_at else None,
        "voided_at": link.voided_at.isoformat() if link.voided_at else None,
    }


async def create_link(rt: Runtime, actor: Actor, user_id: int) -> IssuedLink:
    """A new link for an active user (shown once); the user's earlier unused links become void."""
    require_admin(actor, hidden=True)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        user = await session.scalar(select(User).where(User.id == user_id).with_for_update())
        if user is None:
            raise NotFound(N_("User not found."))
        if not user.active:
            raise ValidationFailed(fields={"user": N_("The user is deactivated: reactivate them first.")})
        await session.execute(
            update(PasswordLink)
            .where(PasswordLink.user_id == user_id, PasswordLink.used_at.is_(None), PasswordLink.voided_at.is_(None))
            .values(voided_at=now)
        )
        link = PasswordLink(
            user_id=user_id, token_hash=token_hash(token), created_by=actor.user_id, created_at=now,
            expires_at=now + LIFETIME,
        )  # fmt: skip
        session.add(link)
        await session.flush()
        record_change(
            session, actor, at=now, action="admin.password-link-created", entity="user", entity_id=user_id,
            before=None, after=_audited(link),
        )  # fmt: skip
    return IssuedLink(link.id, user_id, token, link.expires_at)


async def _usable(session: AsyncSession, token: str, now: datetime, *, lock: bool) -> tuple[PasswordLink, User]:
    """The link and its user, when the link may be used now; NotFound otherwise."""
    query = select(PasswordLink).where(PasswordLink.token_hash == token_hash(token))
    link = await session.scalar(query.with_for_update() if lock else query)
    if link is None or link.used_at or link.voided_at or link.expires_at <= now:
        raise NotFound(INVALID)
    users = select(User).where(User.id == link.user_id)
    user = await session.scalar(users.with_for_update() if lock else users)
    if user is None or not user.active:
        raise NotFound(INVALID)
    return link, user


async def use_link(rt: Runtime, passwords: Passwords, token: str, password: str) -> str:
    """Set the password through the link; the username (to sign in with). A spent, void, expired or unknown link,
    or a deactivated user: NotFound, nothing written."""
    fields: dict[str, str] = {}
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        fields["password"] = Text("{low} to {high} characters.", low=MIN_PASSWORD, high=MAX_PASSWORD)
    check_text(fields, "password", password, max_chars=MAX_PASSWORD)
    if fields:
        raise ValidationFailed(fields=fields)
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise NotFound(INVALID)
    async with rt.db.read() as session:
        await _usable(session, token, rt.clock.now(), lock=False)  # refused before the slow hash
    hashed = await asyncio.to_thread(passwords.hash, password)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        link, user = await _usable(session, token, now, lock=True)
        before = _audited(link)
        link.used_at = now
        user.password_hash = hashed
        ended = await recovery.end_every_way_in(uow, user.id, now=now)
        record_change(
            session, None, at=now, action="password-link.used", entity="user", entity_id=user.id,
            before=before, after={**_audited(link), "password": "changed", **ended.audited()},
        )  # fmt: skip
        username = user.username
    recovery.forget(rt, link.user_id, ended)
    return username
