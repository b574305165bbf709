"""In-process caches of verified access tokens and API keys, so a poll or an integration call does not hit the
database to authenticate.

An entry lives until its token expires or ``ttl`` seconds pass, whichever is first. It is not trusted blindly for
that long: a logout drops it at once on every instance through the bus, and the periodic token check
(``workers/token_checks.py``) re-reads every cached token id with the open streams' ones, in the same batched
lookup, so a revocation or deactivation whose event was lost is refused within ``DOCTORDESK_STREAM_CHECK_SECONDS``.
A revoked token id is remembered for a while, so a request that read the token from the database just before the
revocation committed cannot put it back into the cache. Misses read the database through
``caches/token_reads.py``, where concurrent misses on one token share one read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from doctordesk.domain.integration import Integration
from doctordesk.domain.roles import Actor


class AuthCache:
    def __init__(self, ttl: float = 300.0, size: int = 50_000) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, tuple[Actor, datetime, float]] = {}
        self._revoked: dict[int, float] = {}  # token id -> when it was revoked (monotonic)

    def entry(self, token_hash: str, now: datetime) -> tuple[Actor, datetime] | None:
        """The cached actor and token expiry, or None (not cached, expired, or kept longer than ``ttl``)."""
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        actor, expires_at, cached_at = entry
        if expires_at <= now or time.monotonic() - cached_at > self.ttl:
            self._entries.pop(token_hash, None)
            return None
        return actor, expires_at

    def put(self, token_hash: str, actor: Actor, expires_at: datetime) -> None:
        if actor.token_id is not None and actor.token_id in self._revoked:
            return
        if self.ttl <= 0:
            return
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[token_hash] = (actor, expires_at, time.monotonic())

    def token_ids(self) -> list[int]:
        """The ids of the cached tokens (for the periodic re-check)."""
        return [a.token_id for a, _, _ in self._entries.values() if a.token_id is not None]

    def drop_token(self, token_id: int) -> None:
        _tombstone(self._revoked, token_id)
        for key in [k for k, (a, _, _) in self._entries.items() if a.token_id == token_id]:
            self._entries.pop(key, None)

    def drop_user(self, user_id: int) -> None:
        for key in [k for k, (a, _, _) in self._entries.items() if a.user_id == user_id]:
            self._entries.pop(key, None)


@dataclass
class CachedKey:
    """A verified API key: its caller, and when its last use was stored (written again a minute later)."""

    integration: Integration
    last_used_at: datetime | None
    cached_at: float = field(default_factory=time.monotonic)


class KeyCache:
    """Verified integration API keys, by hash, with the same lifetime and revocation paths as ``AuthCache``: a
    revoked key or a deactivated account is dropped at once on every instance through the bus (``api-key-changed``),
    and the periodic token check re-reads every cached key id, so a lost event is made good within
    ``DOCTORDESK_STREAM_CHECK_SECONDS``. Tombstones keep a read that raced the revocation from putting it back."""

    def __init__(self, ttl: float = 300.0, size: int = 10_000) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, CachedKey] = {}
        self._dropped_keys: dict[int, float] = {}
        self._dropped_accounts: dict[int, float] = {}

    def get(self, key_hash: str) -> CachedKey | None:
        entry = self._entries.get(key_hash)
        if entry is not None and time.monotonic() - entry.cached_at > self.ttl:
            self._entries.pop(key_hash, None)
            return None
        return entry

    def put(self, key_hash: str, entry: CachedKey) -> None:
        caller = entry.integration
        if self.ttl <= 0 or caller.key_id in self._dropped_keys or caller.service_account_id in self._dropped_accounts:
            return
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key_hash] = entry

    def key_ids(self) -> list[int]:
        return [e.integration.key_id for e in self._entries.values()]

    def drop_key(self, key_id: int) -> None:
        _tombstone(self._dropped_keys, key_id)
        for h in [h for h, e in self._entries.items() if e.integration.key_id == key_id]:
            self._entries.pop(h, None)

    def drop_account(self, account_id: int) -> None:
        _tombstone(self._dropped_accounts, account_id)
        for h in [h for h, e in self._entries.items() if e.integration.service_account_id == account_id]:
            self._entries.pop(h, None)


def _tombstone(dropped: dict[int, float], key: int) -> None:
    now = time.monotonic()
    dropped[key] = now
    if len(dropped) > 1000:
        # Older tombstones are past any in-flight request (a read takes far less than a minute).
        for k in [k for k, t in dropped.items() if now - t >= 60.0]:
            dropped.pop(k, None)
