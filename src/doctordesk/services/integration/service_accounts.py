"""Service accounts and their API keys, managed by admins: create an account, issue a key (shown once), list them,
revoke a key, deactivate or reactivate an account. Nothing is ever deleted; every change is audited with the admin
as actor and the entity's before and after (never a key, only its prefix)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.integration import KEY_PREFIX, SHOWN_PREFIX_CHARS, Scope, key_hash
from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Actor, require_admin
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import add_recorded, record_change, revoke_recorded
from doctordesk.services.integration.api_keys import API_KEY_CHANGED
from doctordesk.services.uow import unit_of_work
from doctordesk.store.integration_tables import ApiKey, ServiceAccount

MAX_NAME = 100  # an account's name or a key's label (the columns' width)


@dataclass(frozen=True, slots=True)
class KeyInfo:
    id: int
    prefix: str
    label: str
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class AccountInfo:
    id: int
    name: str
    description: str
    active: bool
    created_at: datetime
    keys: tuple[KeyInfo, ...]


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just issued: ``key`` is the secret, returned this once and never again."""

    key: str
    info: KeyInfo


def _key_audit(k: ApiKey) -> dict[str, object]:
    return {
        "service_account": k.service_account_id,
        "prefix": k.prefix,
        "label": k.label,
        "scopes": list(k.scopes),
        "revoked_at": k.revoked_at.isoformat() if k.revoked_at else None,
    }


def _account_audit(a: ServiceAccount) -> dict[str, object]:
    return {"name": a.name, "description": a.description, "active": a.active}


def _key_info(k: ApiKey) -> KeyInfo:
    return KeyInfo(k.id, k.prefix, k.label, tuple(k.scopes), k.created_at, k.last_used_at, k.revoked_at)


async def _account_info(session: AsyncSession, account: ServiceAccount) -> AccountInfo:
    keys = (
        await session.scalars(select(ApiKey).where(ApiKey.service_account_id == account.id).order_by(ApiKey.id))
    ).all()
    return AccountInfo(
        account.id,
        account.name,
        account.description,
        account.active,
        account.created_at,
        tuple(_key_info(k) for k in keys),
    )


async def create_account(rt: Runtime, actor: Actor, *, name: str, description: str) -> AccountInfo:
    """A new service account (no keys yet). Names follow the name rule and are unique (422 naming ``name``
    otherwise)."""
    require_admin(actor)
    problem = name_problem(name, max_chars=MAX_NAME)
    if problem is not None:
        raise ValidationFailed(fields={"name": problem})
    now = rt.clock.now()
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            if await session.scalar(select(ServiceAccount.id).where(ServiceAccount.name == name)) is not None:
                raise ValidationFailed(fields={"name": N_("A service account with this name exists.")})
            account = ServiceAccount(
                name=name, description=description, active=True, created_at=now, created_by=actor.user_id
            )
            await add_recorded(session, actor, account, at=now, action="service-account.create",
                               entity="service_account", view=_account_audit)  # fmt: skip
            info = await _account_info(session, account)
    except IntegrityError as exc:
        # Two admins creating the same name at once: the second gets the same answer as if it came later.
        raise ValidationFailed(fields={"name": N_("A service account with this name exists.")}) from exc
    return info


async def list_accounts(rt: Runtime, actor: Actor) -> list[AccountInfo]:
    """Every service account with its keys (prefixes, scopes, last use, revocation; never the keys)."""
    require_admin(actor)
    async with rt.db.read() as session:
        accounts = (await session.scalars(select(ServiceAccount).order_by(ServiceAccount.id))).all()
        return [await _account_info(session, a) for a in accounts]


async def get_account(rt: Runtime, actor: Actor, account_id: int) -> AccountInfo:
    require_admin(actor)
    async with rt.db.read() as session:
        account = await session.get(ServiceAccount, account_id)
        if account is None:
            raise NotFound(N_("Service account not found."))
        return await _account_info(session, account)


async def issue_key(rt: Runtime, actor: Actor, account_id: int, *, scopes: Sequence[Scope], label: str) -> NewKey:
    """A new key for an active account with the given scopes; the answer holds the key, shown this once. The label
    (may be empty) follows the name rule."""
    require_admin(actor)
    problem = name_problem(label, max_chars=MAX_NAME) if label.strip() else None
    if problem is not None:
        raise ValidationFailed(fields={"label": problem})
    now = rt.clock.now()
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    async with unit_of_work(rt) as uow:
        session = uow.session
        account = await session.get(ServiceAccount, account_id, with_for_update=True)
        if account is None:
            raise NotFound(N_("Service account not found."))
        if not account.active:
            raise ValidationFailed(N_("This service account is deactivated."))
        row = ApiKey(
            service_account_id=account.id,
            key_hash=key_hash(key),
            prefix=key[:SHOWN_PREFIX_CHARS],
            label=label,
            scopes=sorted({s.value for s in scopes}),
            created_at=now,
            created_by=actor.user_id,
        )
        await add_recorded(session, actor, row, at=now, action="api-key.create", entity="api_key", view=_key_audit)
        info = _key_info(row)
    return NewKey(key, info)


async def revoke_key(rt: Runtime, actor: Actor, account_id: int, key_id: int) -> KeyInfo:
    """Revoke a key: from the next request on it is refused (401). Revoking a revoked key changes nothing."""
    require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.get(ApiKey, key_id, with_for_update=True)
        if row is None or row.service_account_id != account_id:
            raise NotFound(N_("API key not found."))
        if row.revoked_at is None:
            revoke_recorded(session, actor, row, at=now, action="api-key.revoke", entity="api_key", view=_key_audit)
            uow.emit(DomainEvent(API_KEY_CHANGED, (), {"key_id": row.id}))
        info = _key_info(row)
    rt.key_cache.drop_key(key_id)
    return info


async def set_active(rt: Runtime, actor: Actor, account_id: int, *, active: bool) -> AccountInfo:
    """Deactivate (``active`` False) or reactivate an account. A deactivated account's keys are refused from the
    next request on, on every instance (the key caches drop them: ``services/integration/api_keys.py``); they stay
    listed and work again after a reactivation unless revoked. Setting the state it has changes nothing and audits
    nothing."""
    require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        account = await session.get(ServiceAccount, account_id, with_for_update=True)
        if account is None:
            raise NotFound(N_("Service account not found."))
        if account.active != active:
            before = _account_audit(account)
            account.active = active
            record_change(
                session,
                actor,
                at=now,
                action="service-account.reactivate" if active else "service-account.deactivate",
                entity="service_account",
                entity_id=account.id,
                before=before,
                after=_account_audit(account),
            )
            if not active:
                uow.emit(DomainEvent(API_KEY_CHANGED, (), {"account_id": account.id}))
        info = await _account_info(session, account)
    if not active:
        rt.key_cache.drop_account(account_id)
    return info
