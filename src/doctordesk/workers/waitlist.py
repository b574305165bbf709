"""The waitlist's rounds (``services/waitlist/matching.run_round``): woken by every change that can free a time — an
appointment's status or time (cancellations, declines, offers rejected: events on an ``appointment.*`` kind), the
clinic's hours and their exceptions (``clinic.changed``), the waitlist itself (joining, leaving, declining) — and
every ``DOCTORDESK_WAITLIST_CHECK_SECONDS`` besides, which is what expires one-at-a-time offers on the ``Clock``
and notices holds that lapsed. Wake-ups that arrive during a round make one more round, not one each."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from doctordesk.domain.events import CLINIC_CHANGED, DomainEvent
from doctordesk.runtime import Runtime
from doctordesk.services.waitlist.entries import WAKING
from doctordesk.services.waitlist.matching import run_round

log = logging.getLogger(__name__)


def wakes(event: DomainEvent) -> bool:
    """Whether ``event`` may have freed a time someone waits for."""
    return event.kind.startswith("appointment.") or event.kind == CLINIC_CHANGED or event.kind in WAKING


class WaitlistRounds:
    def __init__(self, rt: Runtime, *, interval: float) -> None:
        self.rt = rt
        self.interval = interval
        self._due = asyncio.Event()
        self._stopped = False

    def on_event(self, event: DomainEvent) -> None:
        if wakes(event):
            self._due.set()

    def stop(self) -> None:
        """End ``run`` once a round in progress has finished."""
        self._stopped = True
        self._due.set()

    async def run(self) -> None:
        """A round every ``interval`` seconds, or sooner when woken; a failed round is retried at the next."""
        while not self._stopped:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._due.wait()
            self._due.clear()
            if self._stopped:
                return
            try:
                done = await run_round(self.rt)
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away or busy: the next round tries again
                log.warning("waitlist round failed; retried in %g s", self.interval, exc_info=True)
                continue
            if done.offered or done.expired:
                log.info("waitlist: %d offer(s) made, %d lapsed", done.offered, done.expired)
