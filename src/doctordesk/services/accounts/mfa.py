"""Second factors: TOTP enrolment, recovery codes, the check a sign-in passes, the per-role policy, an admin's
reset (docs/accounts.md#second-factor)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts import factors as f
from doctordesk.domain.accounts.user_agents import SessionDevice
from doctordesk.domain.errors import (
    Forbidden,
    MfaEnrolmentRequired,
    MfaRequired,
    NotFound,
    Unauthorized,
    ValidationFailed,
)
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import recovery, tickets
from doctordesk.services.accounts.sessions import actor_for, issue_token, stamp
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mfa_tables import MfaPolicy, Passkey, RecoveryCode, TotpSecret
from doctordesk.store.tables import User

ENROL_TTL_SECONDS = 900
MAX_CODE_CHARS = 32


@dataclass(frozen=True, slots=True)
class Enrolling:
    """Who sets up a factor: a signed-in actor, or a user whose password was right and whose role needs a factor
    they do not have yet (``ticket``: the enrolment token they hold)."""

    actor: Actor
    ticket: str | None = None


async def factors_of(session: AsyncSession, user_id: int) -> f.Factors:
    totp = await session.scalar(
        select(func.count()).where(TotpSecret.user_id == user_id, TotpSecret.confirmed_at.is_not(None))
    )
    keys = await session.scalar(select(func.count()).where(Passkey.user_id == user_id))
    left = await session.scalar(
        select(func.count()).where(RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
    )
    return f.Factors(totp=bool(totp), passkeys=int(keys or 0), recovery_left=int(left or 0))


async def policy(session: AsyncSession) -> f.Policy:
    roles = await session.scalars(select(MfaPolicy.role).where(MfaPolicy.required.is_(True)))
    return f.policy_of(roles)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the second-factor step of a sign-in whose password was right ended: ``ok`` (go on), ``wrong`` (a failed
    login), ``missing`` (ask for the code: ``factors``), ``enrol`` (set one up first: ``enrolment_token``)."""

    result: str
    factors: tuple[str, ...] = ()
    enrolment_token: str | None = None
    # ``ok`` with a second factor checked (a code), not only because the user has none.
    factor_used: bool = False
    # ``wrong`` with a right code that was already taken: the seconds until the next code (docs/accounts.md).
    next_code_in: int | None = None

    def error(self) -> Exception | None:
        if self.result == "missing":
            return MfaRequired(extra={"factors": list(self.factors)})
        if self.result == "enrol":
            return MfaEnrolmentRequired(extra={"enrolment_token": self.enrolment_token})
        if self.result == "wrong" and self.next_code_in is not None:
            return Unauthorized(spent_message(self.next_code_in), extra=spent_extra(self.next_code_in))
        if self.result == "wrong":
            return Unauthorized(N_("Wrong code."))
        return None


def spent_message(seconds: int) -> str:
    """What a sign-in with a code already taken says: that it was used, and when the next one comes."""
    return Text("This code was already used. Your app shows a new code in {seconds} seconds: enter that one.",
                seconds=seconds)  # fmt: skip


def spent_extra(seconds: int) -> dict[str, object]:
    return {"reason": "code-used", "next_code_in": seconds}


async def second_factor(
    session: AsyncSession, user: User, *, otp: str | None, now: datetime, enrol: bool = True
) -> Outcome:
    """Judge a sign-in whose password was right: ``ok`` when the user has no factor and needs none, or ``otp`` is a
    current TOTP code or an unused recovery code (now used); ``wrong`` for any other code; ``missing`` without
    one; ``enrol`` (with a new enrolment token) when the role needs a factor the user lacks (only with ``enrol``:
    a re-authentication of a signed-in user enrols nobody)."""
    have = await factors_of(session, user.id)
    if not have.any:
        if enrol and (await policy(session)).requires(Role(user.role)):
            ticket = tickets.issue(session, tickets.ENROL, now=now, ttl_seconds=ENROL_TTL_SECONDS, user_id=user.id)
            return Outcome("enrol", enrolment_token=ticket)
        return Outcome("ok")
    if not otp:
        return Outcome("missing", factors=tuple(have.kinds()))
    if await check_code(session, user.id, otp, now=now):
        return Outcome("ok", factor_used=True)
    return Outcome("wrong", next_code_in=await _spent_wait(session, user.id, otp, now=now))


async def _spent_wait(session: AsyncSession, user_id: int, code: str, *, now: datetime) -> int | None:
    """The seconds until the next code when ``code`` is the user's right TOTP code already taken; else None."""
    secret = await session.get(TotpSecret, user_id)
    if secret is None or secret.confirmed_at is None or len(code) > MAX_CODE_CHARS:
        return None
    return f.spent_code_wait(secret.secret, code, at=now, last_step=secret.last_step)


async def check_code(session: AsyncSession, user_id: int, code: str, *, now: datetime) -> bool:
    """A current TOTP code (taken once) or an unused recovery code (used now); False otherwise."""
    if len(code) > MAX_CODE_CHARS:
        return False
    secret = await session.get(TotpSecret, user_id, with_for_update=True)
    if secret is not None and secret.confirmed_at is not None:
        step = f.totp_step(secret.secret, code, at=now, last_step=secret.last_step)
        if step is not None:
            secret.last_step = step
            return True
    if not f.looks_like_recovery_code(code):
        return False
    used = await session.execute(
        update(RecoveryCode)
        .where(
            RecoveryCode.user_id == user_id,
            RecoveryCode.code_hash == f.recovery_hash(code),
            RecoveryCode.used_at.is_(None),
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    if used.rowcount == 1:  # type: ignore[attr-defined]
        audit(session, at=now, actor_id=user_id, action="recovery-code-used", entity="user", entity_id=user_id)
        return True
    return False


async def enrolment_actor(rt: Runtime, ticket: str | None) -> Enrolling:
    """The user an enrolment token stands for (Unauthorized when it is unknown, used or expired)."""
    async with rt.db.read() as session:
        row = await tickets.peek(session, tickets.ENROL, ticket, now=rt.clock.now())
        user = await session.get(User, row.user_id) if row is not None and row.user_id else None
        if user is None or not user.active:
            raise Unauthorized()
        return Enrolling(actor=await actor_for(session, user, None), ticket=ticket)


async def start_totp(rt: Runtime, who: Enrolling) -> tuple[str, str]:
    """A new, not yet active authenticator seed for the user: ``(secret, otpauth_uri)``. Refused (403) while an
    active one exists: an admin resets it first, so a stolen session cannot swap the factor."""
    now = rt.clock.now()
    user_id = who.actor.user_id
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.get(TotpSecret, user_id, with_for_update=True)
        if row is not None and row.confirmed_at is not None:
            raise Forbidden(N_("An authenticator app is already set up. An administrator can reset it."))
        secret = f.new_totp_secret()
        if row is None:
            session.add(TotpSecret(user_id=user_id, secret=secret, created_at=now))
        else:
            row.secret, row.created_at = secret, now
        audit(session, at=now, actor_id=user_id, action="mfa-totp-started", entity="user", entity_id=user_id)
    return secret, f.otpauth_uri(secret, username=who.actor.username)


async def confirm_totp(rt: Runtime, who: Enrolling, code: str) -> list[str]:
    """Turn the pending seed on with a current code from it; the new recovery codes (shown once) when the user
    had no unused ones. A wrong code is a 422 naming ``code``."""
    now = rt.clock.now()
    user_id = who.actor.user_id
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.get(TotpSecret, user_id, with_for_update=True)
        if row is None or row.confirmed_at is not None:
            raise ValidationFailed(fields={"code": N_("Start setting up an authenticator app first.")})
        step = f.totp_step(row.secret, code[:MAX_CODE_CHARS], at=now, last_step=None)
        if step is None:
            raise ValidationFailed(fields={"code": N_("This code is not valid. Enter the current one.")})
        row.confirmed_at, row.last_step = now, step
        if who.ticket is None:  # the session now holds the factor it just proved with a code
            await stamp(session, who.actor.token_id, now=None, second_factor=True)
        audit(session, at=now, actor_id=user_id, action="mfa-totp-enabled", entity="user", entity_id=user_id)
        return await ensure_recovery_codes(session, user_id, now=now)


async def ensure_recovery_codes(session: AsyncSession, user_id: int, *, now: datetime) -> list[str]:
    """Ten fresh recovery codes when the user has no unused ones (the plain codes, to be shown once); [] else."""
    left = await session.scalar(
        select(func.count()).where(RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
    )
    if left:
        return []
    return await _new_codes(session, user_id, now=now)


async def _new_codes(session: AsyncSession, user_id: int, *, now: datetime) -> list[str]:
    await session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user_id))
    codes = f.new_recovery_codes()
    session.add_all(RecoveryCode(user_id=user_id, code_hash=f.recovery_hash(c), created_at=now) for c in codes)
    audit(session, at=now, actor_id=user_id, action="mfa-recovery-codes-made", entity="user", entity_id=user_id)
    return codes


async def new_recovery_codes(rt: Runtime, actor: Actor) -> list[str]:
    """Replace the signed-in user's recovery codes (the old ones stop working); only with a factor on."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        if not (await factors_of(session, actor.user_id)).any:
            raise Forbidden(N_("Set up a second factor first."))
        return await _new_codes(session, actor.user_id, now=now)


async def status(rt: Runtime, user_id: int) -> dict[str, object]:
    """What a user has enrolled, and whether their role must use a second factor."""
    async with rt.db.read() as session:
        have = await factors_of(session, user_id)
        role = await session.scalar(select(User.role).where(User.id == user_id))
        if role is None:
            raise NotFound()
        required = (await policy(session)).requires(Role(role))
    return {"totp": have.totp, "passkeys": have.passkeys, "recovery_codes_left": have.recovery_left,
            "required": required}  # fmt: skip


async def reset(rt: Runtime, admin: Actor, user_id: int) -> None:
    """An admin removes every factor of a user (lost phone), and every way into the account ends with them
    (whoever holds the phone may be signed in: ``recovery.end_every_way_in``); audited. The user enrols again at
    the next sign-in when their role requires it."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        if await uow.session.get(User, user_id, with_for_update=True) is None:
            raise NotFound()
        await recovery.remove_factors(uow, user_id)
        ended = await recovery.end_every_way_in(uow, user_id, now=now)
        audit(uow.session, at=now, actor_id=admin.user_id, action="mfa-reset", entity="user", entity_id=user_id,
              details=ended.audited())  # fmt: skip
    recovery.forget(rt, user_id, ended)


async def set_policy(rt: Runtime, admin: Actor, required: dict[Role, bool]) -> list[str]:
    """Set which roles must use a second factor; the roles now required, sorted. Audited with the change."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        rows = {r.role: r for r in await session.scalars(select(MfaPolicy).with_for_update())}
        for role, value in required.items():
            row = rows.get(role.value)
            if row is None:
                session.add(MfaPolicy(role=role.value, required=value, updated_at=now, updated_by=admin.user_id))
            elif row.required != value:
                row.required, row.updated_at, row.updated_by = value, now, admin.user_id
        details = {role.value: value for role, value in required.items()}
        audit(session, at=now, actor_id=admin.user_id, action="mfa-policy", entity="mfa_policy", entity_id=None,
              details=details)  # fmt: skip
        await session.flush()
        return sorted(r.value for r in (await policy(session)).required)


async def read_policy(rt: Runtime) -> list[str]:
    async with rt.db.read() as session:
        return sorted(r.value for r in (await policy(session)).required)


async def finish_enrolment(rt: Runtime, who: Enrolling, *, device: SessionDevice | None) -> tuple[str, Actor] | None:
    """After a factor was set up with an enrolment token: the token is used up and the sign-in completes with a new
    access token (``device``: what signs in, domain/accounts/user_agents.py). None for a user who was signed in
    already."""
    if who.ticket is None:
        return None
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await tickets.take(session, tickets.ENROL, who.ticket, now=now)
        user = await session.get(User, who.actor.user_id)
        if row is None or user is None or not user.active:
            raise Unauthorized()
        token, actor = await issue_token(
            session, user, now=now, ttl_seconds=rt.settings.token_ttl_seconds, second_factor=True, device=device
        )
        audit(session, at=now, actor_id=user.id, action="login", entity="user", entity_id=user.id,
              details={"enrolled": True})  # fmt: skip
    return token, actor


async def enrolled_users(rt: Runtime) -> list[dict[str, object]]:
    """The users with a second factor, by username (the admin screen's list)."""
    async with rt.db.read() as session:
        counted = await session.execute(select(Passkey.user_id, func.count()).group_by(Passkey.user_id))
        keys = {user_id: int(n) for user_id, n in counted.all()}
        totp = set(await session.scalars(select(TotpSecret.user_id).where(TotpSecret.confirmed_at.is_not(None))))
        ids = totp | set(keys)
        query = select(User).where(User.id.in_(ids)).order_by(User.username)
        users = list(await session.scalars(query)) if ids else []
        return [
            {"id": u.id, "username": u.username, "display_name": u.display_name, "totp": u.id in totp,
             "passkeys": int(keys.get(u.id, 0))}
            for u in users
        ]  # fmt: skip
