"""What one's own security page shows and changes (docs/accounts.md#security-page): one's sessions and the phones
that get notifications, passkeys, the authenticator app, recovery codes left, and the apps one allowed; ending a
session, removing a phone or a passkey, turning the authenticator app off, revoking an app. Each change is the
user's own (another's session, phone, passkey or app is 404), audited, and announced on the user's topic so every
open security page of theirs catches up. The doors ask for a recent authentication (web/routers/security.py)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select, update

from doctordesk.domain.accounts import factors as f
from doctordesk.domain.accounts import user_agents
from doctordesk.domain.accounts.security import DeviceRow, Overview, PasskeyRow, PendingTotp, SessionRow
from doctordesk.domain.errors import Forbidden, NotFound
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import mfa
from doctordesk.services.accounts.sessions import SECURITY_CHANGED, TOKEN_REVOKED
from doctordesk.services.audit.entries import audit
from doctordesk.services.smart import grants
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.store.mfa_tables import Passkey, RecoveryCode, TotpSecret
from doctordesk.store.realtime_tables import Device, PushOutbox
from doctordesk.store.tables import AccessToken, User


def _device(client: str | None, system: str | None, whole: str | None) -> user_agents.SessionDevice | None:
    return user_agents.SessionDevice(client, system, whole) if client or system or whole else None


async def overview(rt: Runtime, actor: Actor) -> Overview:
    """Everything the security page shows, read in one transaction."""
    now = rt.clock.now()
    uid = actor.user_id
    async with rt.db.read() as session:
        live = AccessToken.user_id == uid, AccessToken.revoked_at.is_(None), AccessToken.expires_at > now
        tokens = await session.execute(
            select(
                AccessToken.id,
                AccessToken.created_at,
                AccessToken.expires_at,
                AccessToken.device_client,
                AccessToken.device_system,
                AccessToken.device,
            )
            .where(*live)
            .order_by(AccessToken.created_at.desc(), AccessToken.id.desc())
        )
        sessions = [
            SessionRow(i, c, e, i == actor.token_id, _device(client, system, whole))
            for i, c, e, client, system, whole in tokens.all()
        ]
        phones = await session.execute(
            select(Device.id, Device.platform, Device.last_active_at)
            .where(Device.user_id == uid)
            .order_by(Device.last_active_at.desc(), Device.id)
        )
        devices = [DeviceRow(*row) for row in phones.all()]
        keys = await session.scalars(select(Passkey).where(Passkey.user_id == uid).order_by(Passkey.id))
        passkeys = [PasskeyRow(k.id, k.name, k.created_at, k.last_used_at) for k in keys]
        have = await mfa.factors_of(session, uid)
        seed = await session.get(TotpSecret, uid)
        pending = None
        fresh = now - timedelta(seconds=mfa.ENROL_TTL_SECONDS)
        if seed is not None and seed.confirmed_at is None and seed.created_at > fresh:
            pending = PendingTotp(seed.secret, f.otpauth_uri(seed.secret, username=actor.username))
        required = (await mfa.policy(session)).requires(actor.role)
        apps = await grants.connected(session, uid, now=now)
        # Users made by single sign-on or an import hold a marker starting with "!" instead of a hash.
        stored = await session.scalar(select(User.password_hash).where(User.id == uid))
        has_password = stored is not None and not stored.startswith("!")
    return Overview(sessions, devices, passkeys, have.totp, pending, have.recovery_left, required, apps, has_password)


def _changed(uow: UnitOfWork, user_id: int) -> None:
    uow.emit(DomainEvent(SECURITY_CHANGED, (user_topic(user_id),), {"user_id": user_id}))


async def end_session(rt: Runtime, actor: Actor, token_id: int) -> None:
    """End one of one's own sessions (a browser or phone signed in elsewhere): its token is revoked on every
    instance and its streams close, as at logout. NotFound for a session that is not the user's or already over."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        done = await uow.session.execute(
            update(AccessToken)
            .where(
                AccessToken.id == token_id,
                AccessToken.user_id == actor.user_id,
                AccessToken.revoked_at.is_(None),
                AccessToken.expires_at > now,
            )
            .values(revoked_at=now)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise NotFound()
        audit(uow.session, at=now, actor_id=actor.user_id, action="session-ended", entity="user",
              entity_id=actor.user_id, details={"token_id": token_id})  # fmt: skip
        topic = (user_topic(actor.user_id),)
        uow.emit(DomainEvent(TOKEN_REVOKED, topic, {"token_id": token_id, "user_id": actor.user_id}))
        _changed(uow, actor.user_id)
    rt.auth_cache.drop_token(token_id)


async def remove_device(rt: Runtime, actor: Actor, device_id: int) -> None:
    """Stop notifications to one of one's phones (its registration and pending notifications go)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        mine = Device.id == device_id, Device.user_id == actor.user_id
        if await uow.session.scalar(select(Device.id).where(*mine)) is None:
            raise NotFound()
        await uow.session.execute(delete(PushOutbox).where(PushOutbox.device_id == device_id))
        await uow.session.execute(delete(Device).where(*mine))
        audit(uow.session, at=now, actor_id=actor.user_id, action="push-device-removed", entity="user",
              entity_id=actor.user_id, details={"device": device_id})  # fmt: skip
        _changed(uow, actor.user_id)


async def _keep_a_factor(uow: UnitOfWork, actor: Actor, have: f.Factors, *, removing: str) -> None:
    """Refuse to remove the last factor of a role that must sign in with one; when the last one goes anyway, the
    recovery codes go with it (they stand in for a factor that is no longer there)."""
    left_after = (have.passkeys - (1 if removing == f.PASSKEY else 0)) + (0 if removing == f.TOTP else int(have.totp))
    if left_after > 0:
        return
    if (await mfa.policy(uow.session)).requires(Role(actor.role)):
        raise Forbidden(N_("Your role must sign in with a second factor: set up another one before removing this."))
    await uow.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == actor.user_id))


async def remove_passkey(rt: Runtime, actor: Actor, key_id: int) -> None:
    """Remove one of one's passkeys (it no longer signs in)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        key = await uow.session.scalar(
            select(Passkey).where(Passkey.id == key_id, Passkey.user_id == actor.user_id).with_for_update()
        )
        if key is None:
            raise NotFound()
        await _keep_a_factor(uow, actor, await mfa.factors_of(uow.session, actor.user_id), removing=f.PASSKEY)
        await uow.session.delete(key)
        audit(uow.session, at=now, actor_id=actor.user_id, action="mfa-passkey-removed", entity="user",
              entity_id=actor.user_id, details={"passkey": key_id})  # fmt: skip
        _changed(uow, actor.user_id)


async def totp_off(rt: Runtime, actor: Actor) -> None:
    """Turn one's authenticator app off (a set-up not yet confirmed is dropped too)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        seed = await uow.session.get(TotpSecret, actor.user_id, with_for_update=True)
        if seed is None:
            raise NotFound()
        if seed.confirmed_at is not None:
            await _keep_a_factor(uow, actor, await mfa.factors_of(uow.session, actor.user_id), removing=f.TOTP)
        await uow.session.delete(seed)
        audit(uow.session, at=now, actor_id=actor.user_id, action="mfa-totp-disabled", entity="user",
              entity_id=actor.user_id)  # fmt: skip
        _changed(uow, actor.user_id)


async def revoke_app(rt: Runtime, actor: Actor, client_pk: int) -> None:
    """End every grant one gave an app: its access and refresh tokens stop working at once."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        await grants.revoke_app(uow.session, actor.user_id, client_pk, now=now)
        _changed(uow, actor.user_id)
