"""Accounts: log in, authenticate a bearer token, log out."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import TooManyRequests, Unauthorized, ValidationFailed
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.roles import Actor, Role
from doctordesk.runtime import Runtime
from doctordesk.services.audit import audit
from doctordesk.services.passwords import Passwords
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import AccessToken, LoginThrottle, Patient, User

TOKEN_REVOKED = "token-revoked"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class LoginResult:
    access_token: str
    expires_in: int
    actor: Actor


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
    )


async def login(rt: Runtime, passwords: Passwords, username: str, password: str) -> LoginResult:
    """Check the credentials and issue a new access token. Too many failures lock the username for a while."""
    username = username.strip().lower()
    if not username or not password:
        raise ValidationFailed(
            fields={k: "Required." for k, v in (("username", username), ("password", password)) if not v}
        )
    now = rt.clock.now()
    settings = rt.settings
    async with rt.db.read() as session:
        throttle = await session.get(LoginThrottle, username)
        if throttle and throttle.locked_until and throttle.locked_until > now:
            wait = int((throttle.locked_until - now).total_seconds()) + 1
            raise TooManyRequests("Too many failed logins. Try again later.", retry_after=wait)
        user = await session.scalar(select(User).where(User.username == username, User.active.is_(True)))
    ok = await passwords.verify(user.password_hash if user else None, password)
    async with rt.db.transaction() as session:
        throttle = await session.get(LoginThrottle, username)
        if not ok or user is None:
            if throttle is None:
                throttle = LoginThrottle(username=username, failures=0, updated_at=now)
                session.add(throttle)
            throttle.failures += 1
            throttle.updated_at = now
            if throttle.failures >= settings.login_max_failures:
                throttle.failures = 0
                throttle.locked_until = now + timedelta(seconds=settings.login_lockout_seconds)
            audit(
                session,
                at=now,
                actor_id=user.id if user else None,
                action="login-failed",
                entity="user",
                entity_id=user.id if user else None,
                details={"username": username},
            )
        else:
            if throttle is not None:
                await session.delete(throttle)
            token = secrets.token_urlsafe(32)
            expires_at = now + timedelta(seconds=settings.token_ttl_seconds)
            row = AccessToken(token_hash=token_hash(token), user_id=user.id, created_at=now, expires_at=expires_at)
            session.add(row)
            await session.flush()
            actor = await actor_for(session, user, row.id)
            audit(session, at=now, actor_id=user.id, action="login", entity="user", entity_id=user.id)
    if not ok or user is None:
        raise Unauthorized("Wrong username or password.")
    return LoginResult(access_token=token, expires_in=settings.token_ttl_seconds, actor=actor)


async def authenticate(rt: Runtime, token: str | None) -> Actor:
    """The actor behind a bearer token; Unauthorized when missing, unknown, expired or revoked."""
    if not token:
        raise Unauthorized()
    hashed = token_hash(token)
    now = rt.clock.now()
    cached = rt.auth_cache.get(hashed, now)
    if cached is not None:
        return cached
    async with rt.db.read() as session:
        row = await session.execute(
            select(AccessToken, User).join(User, User.id == AccessToken.user_id).where(AccessToken.token_hash == hashed)
        )
        found = row.first()
        if found is None:
            raise Unauthorized()
        access, user = found
        if access.revoked_at is not None or access.expires_at <= now or not user.active:
            raise Unauthorized("The access token has expired or was revoked.")
        actor = await actor_for(session, user, access.id)
    rt.auth_cache.put(hashed, actor, access.expires_at)
    return actor


async def logout(rt: Runtime, actor: Actor) -> None:
    """Revoke the actor's current token; every instance drops it and closes its streams."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        if actor.token_id is not None:
            access = await uow.session.get(AccessToken, actor.token_id)
            if access is not None and access.revoked_at is None:
                access.revoked_at = now
        audit(uow.session, at=now, actor_id=actor.user_id, action="logout", entity="user", entity_id=actor.user_id)
        uow.emit(
            DomainEvent(
                TOKEN_REVOKED, (user_topic(actor.user_id),), {"token_id": actor.token_id, "user_id": actor.user_id}
            )
        )
    rt.auth_cache.drop_token(actor.token_id or -1)


async def on_event(rt: Runtime, event: DomainEvent) -> None:
    """Bus subscriber: forget revoked tokens (events from other instances too)."""
    if event.kind == TOKEN_REVOKED:
        rt.auth_cache.drop_token(int(event.data.get("token_id") or -1))
