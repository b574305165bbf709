"""Recovery ends every way in: the one place that signs a user out of everything, used by deactivation, an admin's
password reset or factor reset, setting a password through a one-time link, and the user's own password change and
"sign out everywhere else" on the security page, which keep the session they are made from
(docs/accounts.md#recovery).

Every way in is ended, not suspended, so reactivating the user revives none of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, delete, select, update

from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.runtime import Runtime
from doctordesk.services.accounts.sessions import TOKEN_REVOKED
from doctordesk.services.uow import UnitOfWork
from doctordesk.store.mfa_tables import Passkey, RecoveryCode, SignInTicket, TotpSecret
from doctordesk.store.realtime_tables import Device, PushOutbox, StreamTicket
from doctordesk.store.smart_tables import SmartAuthorization, SmartToken
from doctordesk.store.tables import AccessToken


@dataclass(frozen=True, slots=True)
class Ended:
    """What was ended, for the audit entry of the change that did it (``token_ids``: the sessions, whose cached
    entries ``forget`` drops after the commit)."""

    token_ids: list[int]
    app_tokens: int
    devices: int

    def audited(self) -> dict[str, int]:
        return {"tokens_revoked": len(self.token_ids), "app_tokens_revoked": self.app_tokens,
                "push_devices_removed": self.devices}  # fmt: skip


async def end_every_way_in(uow: UnitOfWork, user_id: int, *, now: datetime, keep: int | None = None) -> Ended:
    """In the change's transaction: revoke the user's sessions (every instance drops them and closes their
    streams after the commit), the access and refresh tokens of every app they allowed, and codes of allowed
    launches not yet exchanged; delete their stream tickets, sign-in tickets (enrolment tokens, passkey challenges,
    single sign-on hand-offs) and push registrations (their phones get no more notifications, pending ones
    included). ``keep``: the session the user asks from (their own change), which stays with its stream tickets."""
    session = uow.session
    live: list[ColumnElement[bool]] = [
        AccessToken.user_id == user_id, AccessToken.revoked_at.is_(None), AccessToken.expires_at > now
    ]  # fmt: skip
    if keep is not None:
        live.append(AccessToken.id != keep)
    token_ids = list(await session.scalars(select(AccessToken.id).where(*live)))
    if token_ids:
        await session.execute(
            update(AccessToken)
            .where(AccessToken.id.in_(token_ids))
            .values(revoked_at=now)
            .execution_options(synchronize_session=False)
        )
    for token_id in token_ids:
        uow.emit(DomainEvent(TOKEN_REVOKED, (user_topic(user_id),), {"token_id": token_id, "user_id": user_id}))
    apps = await session.execute(
        update(SmartToken)
        .where(SmartToken.user_id == user_id, SmartToken.revoked_at.is_(None), SmartToken.expires_at > now)
        .values(revoked_at=now)
        .execution_options(synchronize_session=False)
    )
    await session.execute(
        update(SmartAuthorization)
        .where(SmartAuthorization.user_id == user_id, SmartAuthorization.used_at.is_(None))
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    tickets = delete(StreamTicket).where(StreamTicket.user_id == user_id)
    await session.execute(tickets if keep is None else tickets.where(StreamTicket.token_id != keep))
    await session.execute(delete(SignInTicket).where(SignInTicket.user_id == user_id))
    theirs = select(Device.id).where(Device.user_id == user_id)
    await session.execute(delete(PushOutbox).where(PushOutbox.device_id.in_(theirs)))
    devices = await session.execute(delete(Device).where(Device.user_id == user_id))
    return Ended(
        token_ids=token_ids,
        app_tokens=int(apps.rowcount or 0),  # type: ignore[attr-defined]
        devices=int(devices.rowcount or 0),  # type: ignore[attr-defined]
    )


async def remove_factors(uow: UnitOfWork, user_id: int) -> None:
    """Delete the user's authenticator app, recovery codes and passkeys (they enrol again when their role needs a
    factor)."""
    for table in (TotpSecret, RecoveryCode, Passkey):
        await uow.session.execute(delete(table).where(table.user_id == user_id))


def forget(rt: Runtime, user_id: int, ended: Ended) -> None:
    """After the commit: this instance's cache forgets the ended sessions at once (others on the event)."""
    for token_id in ended.token_ids:
        rt.auth_cache.drop_token(token_id)
    rt.auth_cache.drop_user(user_id)
