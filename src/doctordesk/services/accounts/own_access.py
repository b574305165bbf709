"""One's own ways in, from the security page (docs/accounts.md#security-page): changing one's password and "sign
out everywhere else". Both end every other way into the account through ``recovery.end_every_way_in`` (sessions,
apps' tokens, stream tickets, push registrations) and keep the session they are made from; both are audited and
announced on the user's topic. The doors ask for a recent authentication first (web/routers/security.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.login_throttle import address_key
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.inputs import check_text
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import auth, recovery
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.services.accounts.sessions import SECURITY_CHANGED
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import UnitOfWork, run_hooks, unit_of_work
from doctordesk.store.tables import User


@dataclass(frozen=True, slots=True)
class NewPassword:
    """The password change form: the current password, the new one and the new one again."""

    current: str
    new: str
    repeat: str


def _judged(change: NewPassword) -> None:
    """The new password under the rules of every password (an admin's, a one-time link's): 8 to 1024 characters,
    no control characters; typed the same twice, and not the current one. Field errors, nothing counted."""
    fields: dict[str, str] = {}
    if not change.current:
        fields["password"] = N_("Required.")
    check_text(fields, "password", change.current, max_chars=MAX_PASSWORD)
    if not MIN_PASSWORD <= len(change.new) <= MAX_PASSWORD:
        fields["new_password"] = Text("{low} to {high} characters.", low=MIN_PASSWORD, high=MAX_PASSWORD)
    check_text(fields, "new_password", change.new, max_chars=MAX_PASSWORD)
    if "new_password" not in fields and change.new == change.current:
        fields["new_password"] = N_("Choose a password other than your current one.")
    if change.repeat != change.new:
        fields["new_password_again"] = N_("The two new passwords differ.")
    if fields:
        raise ValidationFailed(fields=fields)


def _changed(uow: UnitOfWork, user_id: int) -> None:
    uow.emit(DomainEvent(SECURITY_CHANGED, (user_topic(user_id),), {"user_id": user_id}))


async def change_password(
    rt: Runtime, passwords: Passwords, actor: Actor, change: NewPassword, *, client_host: str | None
) -> recovery.Ended:
    """Set a new password after checking the current one, under the login throttle: a wrong current password is a
    failed login (``password-change-failed``, counted against the username and address; 429 when throttled).
    Every other session, app grant, stream ticket and push registration ends; this session stays."""
    _judged(change)
    hashed = await asyncio.to_thread(passwords.hash, change.new)
    address = address_key(client_host)

    async def proved(
        session: AsyncSession, user: User, now: datetime, _factor: bool
    ) -> tuple[UnitOfWork, recovery.Ended]:
        uow = UnitOfWork(session)
        await session.execute(update(User).where(User.id == user.id).values(password_hash=hashed))
        ended = await recovery.end_every_way_in(uow, user.id, now=now, keep=actor.token_id)
        audit(session, at=now, actor_id=user.id, action="password-changed", entity="user", entity_id=user.id,
              details={"address": address, **ended.audited()})  # fmt: skip
        _changed(uow, user.id)
        await run_hooks(rt, uow)
        return uow, ended

    uow, ended = await auth.attempt(
        rt, passwords, actor.username, change.current, client_host=client_host, otp=None, succeed=proved,
        purpose=auth.CHANGE_PASSWORD,
    )  # fmt: skip
    await rt.publish(uow.events)
    recovery.forget(rt, actor.user_id, ended)
    return ended


async def sign_out_elsewhere(rt: Runtime, actor: Actor) -> recovery.Ended:
    """End every other session, app grant, stream ticket and push registration of the user; this session stays."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        ended = await recovery.end_every_way_in(uow, actor.user_id, now=now, keep=actor.token_id)
        audit(uow.session, at=now, actor_id=actor.user_id, action="signed-out-elsewhere", entity="user",
              entity_id=actor.user_id, details=ended.audited())  # fmt: skip
        _changed(uow, actor.user_id)
    recovery.forget(rt, actor.user_id, ended)
    return ended
