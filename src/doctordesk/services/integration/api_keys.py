"""Authenticating an integration API call by its API key.

A key is looked up by its SHA-256 (one indexed read) and then kept in the key cache (``caches/auth.py``)
for up to ``DOCTORDESK_AUTH_CACHE_SECONDS``: a revocation or an account's deactivation drops it on every instance
through the bus at once (``api-key-changed``), and the periodic token check re-reads every cached key, so a lost
event is made good within ``DOCTORDESK_STREAM_CHECK_SECONDS``. Its last use is written only when the stored one is a
minute old or more, so a busy key costs one small write a minute, not one per request.
"""

from __future__ import annotations

from sqlalchemy import or_, select, update

from doctordesk.caches.auth import CachedKey
from doctordesk.domain.errors import Unauthorized
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
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
from doctordesk.services.uow import unit_of_work
from doctordesk.store.integration_tables import ApiKey, ServiceAccount

# Published after a key was revoked ({"key_id"}) or an account deactivated ({"account_id"}).
API_KEY_CHANGED = EventKind.API_KEY_CHANGED


async def authenticate(rt: Runtime, key: str | None) -> Integration:
    """The service account behind ``key``; Unauthorized when missing, unknown, revoked or its account deactivated."""
    if not key:
        raise Unauthorized(N_("An API key is required (Authorization: Bearer ddk_... or X-Api-Key)."))
    if not looks_like_key(key):
        raise Unauthorized(N_("Unknown API key."))
    now = rt.clock.now()
    hashed = key_hash(key)
    cached = rt.key_cache.get(hashed)
    if cached is None:
        cached = await _read_key(rt, hashed)
        rt.key_cache.put(hashed, cached)
    if needs_last_use(cached.last_used_at, now):
        async with unit_of_work(rt) as uow:
            session = uow.session
            # Conditional, so instances racing on one key write it once.
            await session.execute(
                update(ApiKey)
                .where(
                    ApiKey.id == cached.integration.key_id,
                    or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at <= now - LAST_USE_RESOLUTION),
                )
                .values(last_used_at=now)
            )
        cached.last_used_at = now
    return cached.integration


async def _read_key(rt: Runtime, hashed: str) -> CachedKey:
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
    scopes = frozenset(Scope(s) for s in row.scopes if s in Scope._value2member_map_)
    caller = Integration(service_account_id=account.id, name=account.name, key_id=row.id, scopes=scopes)
    return CachedKey(caller, row.last_used_at)


async def valid_keys(rt: Runtime, key_ids: list[int]) -> set[int]:
    """Which of ``key_ids`` still work (not revoked, their account active): the periodic check of cached keys."""
    valid: set[int] = set()
    async with rt.db.read() as session:
        for i in range(0, len(key_ids), 500):
            chunk = key_ids[i : i + 500]
            valid.update(
                await session.scalars(
                    select(ApiKey.id)
                    .join(ServiceAccount, ServiceAccount.id == ApiKey.service_account_id)
                    .where(ApiKey.id.in_(chunk), ApiKey.revoked_at.is_(None), ServiceAccount.active.is_(True))
                )
            )
    return valid


# The kinds ``on_event`` hears (whatever their topics).
HEARS = frozenset({API_KEY_CHANGED})


def on_event(rt: Runtime, event: DomainEvent) -> None:
    """Bus subscriber: forget a revoked key, or every key of a deactivated account (events of other instances too)."""
    if event.kind != API_KEY_CHANGED:
        return
    if event.data.get("key_id") is not None:
        rt.key_cache.drop_key(int(event.data["key_id"]))
    if event.data.get("account_id") is not None:
        rt.key_cache.drop_account(int(event.data["account_id"]))
