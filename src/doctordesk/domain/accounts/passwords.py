"""Password hashing with argon2 (run off the event loop: hashing is deliberately slow)."""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError


class Passwords:
    def __init__(self, *, time_cost: int = 3, memory_kib: int = 65536) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=1)
        # Verified against when the username is unknown, so both cases take the same time.
        self._dummy = self._hasher.hash("not-a-password")

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    async def verify(self, stored_hash: str | None, password: str) -> bool:
        return await asyncio.to_thread(self._verify, stored_hash or self._dummy, password, stored_hash is not None)

    def _verify(self, stored_hash: str, password: str, real: bool) -> bool:
        try:
            return self._hasher.verify(stored_hash, password) and real
        except (VerificationError, InvalidHashError):
            return False
