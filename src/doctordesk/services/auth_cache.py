"""A short-lived in-process cache of verified access tokens, so a poll does not hit the database to authenticate.

Entries live ``ttl`` seconds at most; a revocation (logout) drops them at once on every instance through the bus.
"""

from __future__ import annotations

import time
from datetime import datetime

from doctordesk.domain.roles import Actor


class AuthCache:
    def __init__(self, ttl: float = 5.0, size: int = 50_000) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, tuple[Actor, datetime, float]] = {}

    def get(self, token_hash: str, now: datetime) -> Actor | None:
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        actor, expires_at, cached_at = entry
        if expires_at <= now or time.monotonic() - cached_at > self.ttl:
            self._entries.pop(token_hash, None)
            return None
        return actor

    def put(self, token_hash: str, actor: Actor, expires_at: datetime) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[token_hash] = (actor, expires_at, time.monotonic())

    def drop_token(self, token_id: int) -> None:
        for key in [k for k, (a, _, _) in self._entries.items() if a.token_id == token_id]:
            self._entries.pop(key, None)

    def drop_user(self, user_id: int) -> None:
        for key in [k for k, (a, _, _) in self._entries.items() if a.user_id == user_id]:
            self._entries.pop(key, None)
