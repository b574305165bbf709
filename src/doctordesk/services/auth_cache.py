"""An in-process cache of verified access tokens, so a poll does not hit the database to authenticate.

An entry lives until its token expires or ``ttl`` seconds pass, whichever is first. It is not trusted blindly for
that long: a logout drops it at once on every instance through the bus, and the periodic token check
(``realtime/token_checks.py``) re-reads every cached token id with the open streams' ones, in the same batched
lookup, so a revocation or deactivation whose event was lost is refused within ``DOCTORDESK_STREAM_CHECK_SECONDS``.
A revoked token id is remembered for a while, so a request that read the token from the database just before the
revocation committed cannot put it back into the cache. Misses read the database through
``services/token_reads.py``, where concurrent misses on one token share one read.
"""

from __future__ import annotations

import time
from datetime import datetime

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
        now = time.monotonic()
        self._revoked[token_id] = now
        if len(self._revoked) > 1000:
            # Older tombstones are past any in-flight request (a read takes far less than a minute).
            self._revoked = {k: t for k, t in self._revoked.items() if now - t < 60.0}
        for key in [k for k, (a, _, _) in self._entries.items() if a.token_id == token_id]:
            self._entries.pop(key, None)

    def drop_user(self, user_id: int) -> None:
        for key in [k for k, (a, _, _) in self._entries.items() if a.user_id == user_id]:
            self._entries.pop(key, None)
