"""A stream never outlives its token: every open stream's token (and every token and API key the auth caches hold)
is re-checked against the database.

A logout closes its token's streams at once on every instance through the bus (``token-revoked``). When the bus
cannot carry that event (Redis down or frozen when the logout happened) or nothing publishes one (a user made
inactive in the database), this check does: every ``DOCTORDESK_STREAM_CHECK_SECONDS``, and at once when the bus
reconnects (``wake``). One check reads which of this instance's open tokens are still valid, in batched
primary-key lookups, and closes the streams of the others; the same check covers revocation, expiry and
deactivation (docs/realtime.md#closing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from doctordesk.runtime import Runtime
from doctordesk.services import streams
from doctordesk.services.integration import api_keys

log = logging.getLogger(__name__)


class TokenChecks:
    def __init__(self, rt: Runtime, *, interval: float) -> None:
        self.rt = rt
        self.interval = interval
        self._due = asyncio.Event()
        self._stopped = False

    def wake(self) -> None:
        """Check now (the bus reconnected: revocations may have been missed)."""
        self._due.set()

    def stop(self) -> None:
        """End ``run`` once a check in progress has finished (a database call is never cut off)."""
        self._stopped = True
        self._due.set()

    async def check(self) -> int:
        """Close the streams whose token is no longer valid, and forget such tokens in the auth cache (one lookup
        covers both); the number of streams closed."""
        hub = self.rt.hub
        key_ids = sorted(set(self.rt.key_cache.key_ids()))
        if key_ids:
            valid_keys = await api_keys.valid_keys(self.rt, key_ids)
            for key_id in key_ids:
                if key_id not in valid_keys:
                    self.rt.key_cache.drop_key(key_id)
        token_ids = sorted({*hub.token_ids(), *self.rt.auth_cache.token_ids()})
        if not token_ids:
            return 0
        valid = await streams.valid_tokens(self.rt, token_ids)
        closed = 0
        for token_id in token_ids:
            if token_id not in valid:
                closed += hub.close_token(token_id)
                self.rt.auth_cache.drop_token(token_id)
        return closed

    async def run(self) -> None:
        """Check every ``interval`` seconds, or sooner when woken; a failed check (database away) is retried at
        the next one."""
        while not self._stopped:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._due.wait()
            self._due.clear()
            if self._stopped:
                return
            try:
                closed = await self.check()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away: streams stay as they are until a check succeeds
                log.warning("stream token check failed; retried in %g s", self.interval, exc_info=True)
                continue
            if closed:
                log.info("closed %d stream(s) whose token is no longer valid", closed)
