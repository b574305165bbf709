"""Authenticating an integration API call by its API key.

A key is looked up by its SHA-256 on every call (one indexed read: a revocation takes effect on the next request,
on every instance). Its last use is written only when the stored one is a minute old or more, so a busy key costs
one small write a minute, not one per request.
"""

from __future__ import annotations

from sqlalchemy import or_, select, update

from doctordesk.domain.errors import Unauthorized
from doctordesk.domain.integration import (
    LAST_USE_RESOLUTION,
    Integration,
    Scope,
    key_hash,
    looks_like_key,
    needs_last_use,
)
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.store.integration_tables import ApiKey, ServiceAccount


async def authenticate(rt: Runtime, key: str | None) -> Integration:
    """The service account behind ``key``; Unauthorized when missing, unknown, revoked or its account deactivated."""
    if not key:
        raise Unauthorized(N_("An API key is required (Authorization: Bearer ddk_... or X-Api-Key)."))
    if not looks_like_key(key):
        raise Unauthorized(N_("Unknown API key."))
    now = rt.clock.now()
    hashed = key_hash(key)
    async with rt.db.read() as session:
        found = (
            await session.execute(
                select(ApiKey, ServiceAccount)
                .join(ServiceAccount, ServiceAccount.id == ApiKey.service_account_id)
                .where(ApiKey.key_hash == hashed)
            )
        ).first()
    if found is None:
        raise Unauthorized(N_("Unknown API key."))
    row, account = found
    if row.revoked_at is not None or not account.active:
        raise Unauthorized(N_("This API key was revoked."))
    if needs_last_use(row.last_used_at, now):
        async with rt.db.transaction() as session:
            # Conditional, so instances racing on one key write it once.
            await session.execute(
                update(ApiKey)
                .where(
                    ApiKey.id == row.id,
                    or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at <= now - LAST_USE_RESOLUTION),
                )
                .values(last_used_at=now)
            )
    scopes = frozenset(Scope(s) for s in row.scopes if s in Scope._value2member_map_)
    return Integration(service_account_id=account.id, name=account.name, key_id=row.id, scopes=scopes)
