"""Login-throttle rows that no longer matter are deleted ``login_prune_delay_seconds`` after a serving process
starts and then hourly (every instance: the deletes are idempotent and cheap; docs/accounts.md#throttling)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from doctordesk.runtime import Runtime
from doctordesk.services.accounts import login_throttle

PRUNE_EVERY_SECONDS = 3600.0
log = logging.getLogger(__name__)


async def prune_login_throttle(runtime: Runtime, stopping: asyncio.Event) -> None:
    """Delete login-throttle rows that no longer matter, ``login_prune_delay_seconds`` after the start and then
    hourly until ``stopping``."""
    wait = runtime.settings.login_prune_delay_seconds
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await stopping.wait()
        if stopping.is_set():
            return
        wait = PRUNE_EVERY_SECONDS
        try:
            limits = login_throttle.limits(runtime.settings)
            removed = await login_throttle.prune(runtime.db, limits, now=runtime.clock.now())
            if removed:
                log.info("login throttling: pruned %d rows that no longer matter", removed)
        except Exception:  # the database is away or busy: try again at the next round
            log.warning("login throttling: pruning failed; retried in an hour", exc_info=True)
