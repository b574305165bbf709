"""Recent authentication ("step-up"): a change of how an account signs in or who may act for it needs a proof of
who one is within ``DOCTORDESK_REAUTH_SECONDS``, so a stolen session cannot plant a lasting way in
(docs/accounts.md#recent-authentication).

The proof is kept on the access token: its sign-in, or a re-authentication that stamps it anew.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import ReauthenticationRequired
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import auth, mfa
from doctordesk.services.accounts.sessions import stamp
from doctordesk.store.tables import AccessToken, User


async def require_recent(rt: Runtime, who: mfa.Enrolling | Actor) -> None:
    """Raise ReauthenticationRequired unless the caller proved who they are within ``DOCTORDESK_REAUTH_SECONDS``,
    with a second factor when the account has one. Checked before the change runs (web/deps: a refusal writes
    nothing); a proof only ages, so no lock is needed. An enrolment token is itself such a proof (a right password
    moments ago, for a user without a factor; single-use, 15 minutes)."""
    if isinstance(who, mfa.Enrolling):
        if who.ticket is not None:
            return
        who = who.actor
    since = rt.clock.now() - timedelta(seconds=rt.settings.reauth_seconds)
    async with rt.db.read() as session:
        row = await session.get(AccessToken, who.token_id) if who.token_id is not None else None
        if row is None or row.authenticated_at is None or row.authenticated_at < since:
            raise ReauthenticationRequired()
        if not row.second_factor and (await mfa.factors_of(session, who.user_id)).any:
            raise ReauthenticationRequired()


async def with_password(
    rt: Runtime, passwords: Passwords, actor: Actor, *, password: str, otp: str | None, client_host: str | None
) -> None:
    """Re-authenticate the signed-in ``actor`` with their password, and the code of their second factor when they
    have one: exactly the checks, throttle and audit of a sign-in (``reauthenticated``,
    ``reauthentication-failed``, ``reauthentication-throttled``), without a new token. Wrong answers are field
    errors (422), a throttled one 429."""

    async def proved(session: AsyncSession, _user: User, now: datetime, factor_used: bool) -> None:
        await stamp(session, actor.token_id, now=now, second_factor=factor_used)

    await auth.attempt(
        rt,
        passwords,
        actor.username,
        password,
        client_host=client_host,
        otp=otp,
        succeed=proved,
        purpose=auth.REAUTHENTICATE,
    )
