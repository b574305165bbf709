"""Accounts: log in, authenticate a bearer token, log out."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, String, any_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.login_throttle import address_key
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.accounts.user_agents import SessionDevice
from doctordesk.domain.errors import TooManyRequests, Unauthorized, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.inputs import check_text, is_plain_text
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import login_throttle, mfa
from doctordesk.services.accounts.sessions import TOKEN_REVOKED as TOKEN_REVOKED
from doctordesk.services.accounts.sessions import issue_token
from doctordesk.services.accounts.sessions import token_hash as token_hash
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import AccessToken, Patient, User

log = logging.getLogger(__name__)
_T = TypeVar("_T")

LANGUAGE_CHOSEN = EventKind.USER_LANGUAGE
MAX_USERNAME = 64  # the column's width: longer names cannot exist, and must not reach the database
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
# Tokens are 43 characters; anything much longer is not one of ours and is not hashed.
MAX_TOKEN_CHARS = 256


@dataclass(frozen=True, slots=True)
class LoginResult:
    access_token: str
    expires_in: int
    actor: Actor


async def login(
    rt: Runtime,
    passwords: Passwords,
    username: str,
    password: str,
    *,
    client_host: str | None,
    device: SessionDevice | None,
    otp: str | None = None,
) -> LoginResult:
    """Check the credentials and issue a new access token. Failures are throttled per username and client address
    (``client_host``: the peer, or the client a trusted proxy names) and per username (docs/accounts.md). A user
    with a second factor sends ``otp`` too (a TOTP or recovery code): without it MfaRequired, wrong it is a failed
    login like a wrong password (docs/accounts.md#second-factor). ``device``: what signs in, as the security page
    names it (domain/accounts/user_agents.py)."""
    ttl = rt.settings.token_ttl_seconds

    async def issue(session: AsyncSession, user: User, now: datetime, factor_used: bool) -> tuple[str, Actor]:
        return await issue_token(session, user, now=now, ttl_seconds=ttl, second_factor=factor_used, device=device)

    token, actor = await attempt(rt, passwords, username, password, client_host=client_host, otp=otp, succeed=issue)
    return LoginResult(access_token=token, expires_in=ttl, actor=actor)


@dataclass(frozen=True, slots=True)
class Purpose:
    """What a check of the password (and code) is for: a sign-in, or the re-authentication of a signed-in user
    (audited under its own names, enrols nobody, and says what was wrong as field errors: the session stands).
    ``factor=False``: the password alone (a signed-in user's own password change, whose session already proved
    the factor); ``succeeded=None``: the caller audits the success itself, with what it changed."""

    succeeded: str | None = "login"
    failed: str = "login-failed"
    throttled: str = "login-throttled"
    reauthenticate: bool = False
    factor: bool = True


SIGN_IN = Purpose()
REAUTHENTICATE = Purpose("reauthenticated", "reauthentication-failed", "reauthentication-throttled", True)
CHANGE_PASSWORD = Purpose(None, "password-change-failed", "password-change-throttled", True, factor=False)


async def attempt(
    rt: Runtime,
    passwords: Passwords,
    username: str,
    password: str,
    *,
    client_host: str | None,
    otp: str | None,
    succeed: Callable[[AsyncSession, User, datetime, bool], Awaitable[_T]],
    purpose: Purpose = SIGN_IN,
) -> _T:
    """Check a username, password and code under the login throttle, and call ``succeed(session, user, now,
    factor_used)`` in the transaction that records a right one (``factor_used``: a second factor was checked)."""
    username = username.strip().lower()
    fields = {k: N_("Required.") for k, v in (("username", username), ("password", password)) if not v}
    check_text(fields, "username", username, max_chars=MAX_USERNAME)
    check_text(fields, "password", password, max_chars=MAX_PASSWORD)
    if otp:
        check_text(fields, "otp", otp, max_chars=mfa.MAX_CODE_CHARS)
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    settings = rt.settings
    address = address_key(client_host)
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            limits = login_throttle.limits(settings)
            await login_throttle.admit(session, limits, username=username, address=address, now=now)
            user = await session.scalar(select(User).where(User.username == username, User.active.is_(True)))
    except TooManyRequests as refused:
        # The refused attempt's own transaction rolled back (a 429 does not count): audited in one of its own.
        await _audit_throttled(
            rt, username=username, address=address, now=now, retry_after=refused.retry_after, action=purpose.throttled
        )
        raise
    ok = await passwords.verify(user.password_hash if user else None, password)
    enrol = not purpose.reauthenticate
    async with unit_of_work(rt) as uow:
        session = uow.session
        second = None
        if ok and user:
            enough = mfa.Outcome("ok") if not purpose.factor else None
            second = enough or await mfa.second_factor(session, user, otp=otp, now=now, enrol=enrol)
        if not ok or user is None or second is None or second.result == "wrong":
            details: dict[str, object] = {"username": username, "address": address}
            if ok:
                details["reason"] = "second-factor" if second is None or second.next_code_in is None else "code-used"
            audit(session, at=now, actor_id=user.id if user else None, action=purpose.failed, entity="user",
                  entity_id=user.id if user else None, details=details)  # fmt: skip
        elif second.result == "enrol":  # the credentials were all right: nothing to count against the address
            await login_throttle.succeeded(session, username=username, address=address, now=now)
            audit(session, at=now, actor_id=user.id, action="login-enrolment", entity="user", entity_id=user.id,
                  details={"address": address})  # fmt: skip
        elif second.result == "ok":
            await login_throttle.succeeded(session, username=username, address=address, now=now)
            done = await succeed(session, user, now, second.factor_used)
            details = {"address": address, "second_factor": second.factor_used}
            if purpose.succeeded is not None:
                audit(session, at=now, actor_id=user.id, action=purpose.succeeded, entity="user", entity_id=user.id,
                      details=details)  # fmt: skip
    if not ok or user is None or second is None:
        if purpose.reauthenticate:
            raise ValidationFailed(fields={"password": N_("Wrong password.")})
        raise Unauthorized(N_("Wrong username or password."))
    # A missing code stays counted by the throttle until the sign-in succeeds (docs/accounts.md#second-factor).
    if purpose.reauthenticate and second.result == "missing":
        raise ValidationFailed(
            fields={"otp": N_("Enter the code from your authenticator app or a recovery code.")},
            extra={"factors": list(second.factors)},
        )
    if purpose.reauthenticate and second.result == "wrong":
        spent = second.next_code_in
        raise ValidationFailed(fields={"otp": mfa.spent_message(spent) if spent is not None else N_("Wrong code.")})
    error = second.error()
    if error is not None:
        raise error
    return done


async def _audit_throttled(
    rt: Runtime, *, username: str, address: str, now: datetime, retry_after: int | None, action: str
) -> None:
    """A ``login-throttled`` audit entry (never the password). A failure to write it is logged: the caller still
    answers 429."""
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            user_id = await session.scalar(select(User.id).where(User.username == username))
            audit(
                session,
                at=now,
                actor_id=user_id,
                action=action,
                entity="user",
                entity_id=user_id,
                details={"username": username, "address": address, "retry_after": retry_after},
            )
    except Exception:  # the audit log is unreachable or busy: the refusal stands
        log.warning("could not audit a throttled login of %r from %s", username, address, exc_info=True)


# A token and its user in one query of plain columns (no ORM objects: this runs on every stream open and every
# poll whose token is not cached); a patient's own patient id comes along.
_TOKEN_AND_USER = (
    select(
        AccessToken.id,
        AccessToken.revoked_at,
        AccessToken.expires_at,
        User.id,
        User.username,
        User.role,
        User.display_name,
        User.active,
        Patient.id,
        User.language,
    )
    .join(User, User.id == AccessToken.user_id)
    .outerjoin(Patient, Patient.user_id == User.id)
)


async def _read_token(rt: Runtime, condition: ColumnElement[bool]) -> tuple[Actor, datetime]:
    """The actor and expiry of the token matching ``condition``; Unauthorized when unknown, expired or revoked."""
    async with rt.db.read(screen=True) as session:
        row = (await session.execute(_TOKEN_AND_USER.where(condition))).first()
    return _valid_actor(rt, row)


async def _rows_by_hash(rt: Runtime, hashes: Sequence[str]) -> dict[str, Sequence[Any]]:
    """The token-and-user rows of ``hashes`` in one query (the unknown ones absent). The hashes travel as one
    parameter whatever their number (SQLite: a JSON array read by ``json_each``; PostgreSQL: an array), so the
    statement is the same for every batch: a statement per batch size would fill each connection's cache of
    prepared statements, which on SQLite kept the server's memory growing while streams churned."""
    if rt.db.is_sqlite:
        each = func.json_each(bindparam("hashes", json.dumps(list(hashes)), type_=String)).table_valued("value")
        wanted: ColumnElement[bool] = AccessToken.token_hash.in_(select(each.c.value))
    else:
        wanted = AccessToken.token_hash == any_(bindparam("hashes", list(hashes), type_=ARRAY(String)))
    async with rt.db.read(screen=True) as session:
        rows = (await session.execute(_TOKEN_AND_USER.add_columns(AccessToken.token_hash).where(wanted))).all()
    return {row[-1]: row for row in rows}


def _valid_actor(rt: Runtime, row: Sequence[Any] | None) -> tuple[Actor, datetime]:
    """The actor and expiry a token-and-user row stands for; Unauthorized when absent, expired or revoked."""
    if row is None:
        raise Unauthorized()
    token_id, revoked_at, expires_at, user_id, username, role, display_name, active, patient_id, language = row[:10]
    if revoked_at is not None or expires_at <= rt.clock.now() or not active:
        raise Unauthorized(N_("The access token has expired or was revoked."))
    actor = Actor(
        user_id=user_id,
        username=username,
        role=Role(role),
        display_name=display_name,
        token_id=token_id,
        patient_id=patient_id if role == Role.PATIENT else None,
        language=language,
    )
    return actor, expires_at


async def verified_token(rt: Runtime, token: str | None) -> tuple[Actor, datetime]:
    """The actor behind a bearer token and when the token expires; Unauthorized when missing, unknown, expired or
    revoked. Cached (caches/auth.py)."""
    if not token or not is_plain_text(token, max_chars=MAX_TOKEN_CHARS):
        raise Unauthorized()
    hashed = token_hash(token)
    cached = rt.auth_cache.entry(hashed, rt.clock.now())
    if cached is not None:
        return cached

    # Reads of tokens asked for together (streams reopening, one client's polls) share a query (token_reads.py).
    row = await rt.token_reads.get(hashed, lambda hashes: _rows_by_hash(rt, hashes))
    actor, expires_at = _valid_actor(rt, row)
    rt.auth_cache.put(hashed, actor, expires_at)
    return actor, expires_at


def cached_actor(rt: Runtime, token: str) -> Actor | None:
    """The actor behind a bearer token when the cache holds it (no I/O; None: ask ``authenticate``)."""
    cached = rt.auth_cache.entry(token_hash(token), rt.clock.now())
    return cached[0] if cached is not None else None


async def authenticate(rt: Runtime, token: str | None) -> Actor:
    """The actor behind a bearer token; Unauthorized when missing, unknown, expired or revoked."""
    actor, _expires_at = await verified_token(rt, token)
    return actor


async def token_by_id(rt: Runtime, token_id: int) -> tuple[Actor, datetime]:
    """The actor and expiry of a token known by id (a redeemed stream ticket's); Unauthorized when it is no
    longer valid."""
    return await _read_token(rt, AccessToken.id == token_id)


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


# The kinds ``on_event`` hears (whatever their topics).
HEARS = frozenset({TOKEN_REVOKED, LANGUAGE_CHOSEN})


async def on_event(rt: Runtime, event: DomainEvent) -> None:
    """Bus subscriber: forget revoked tokens, and the cached actors of a user who chose another language (events
    from other instances too)."""
    if event.kind == TOKEN_REVOKED:
        rt.auth_cache.drop_token(int(event.data.get("token_id") or -1))
    elif event.kind == LANGUAGE_CHOSEN:
        rt.auth_cache.drop_user(int(event.data.get("user_id") or -1))
