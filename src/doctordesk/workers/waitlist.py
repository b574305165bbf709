"""The waitlist's rounds (``services/waitlist/matching.run_round``): woken by every change that can free a time — an
appointment's status or time (cancellations, declines, offers rejected: events on an ``appointment.*`` kind), the
clinic's hours and their exceptions (``clinic.changed``), the waitlist itself (joining, leaving, declining) — and
every ``DOCTORDESK_WAITLIST_CHECK_SECONDS`` besides, which is what expires one-at-a-time offers on the ``Clock``
and notices holds that lapsed. Wake-ups that arrive during a round make one more round, not one each
(``DrainLoop.run``)."""

from __future__ import annotations

import logging

from doctordesk.domain.event_kinds import APPOINTMENT_KINDS
from doctordesk.domain.events import CLINIC_CHANGED, DomainEvent
from doctordesk.realtime.lease import DrainLoop
from doctordesk.runtime import Runtime
from doctordesk.services.waitlist.entries import WAKING
from doctordesk.services.waitlist.matching import run_round

log = logging.getLogger(__name__)


def wakes(event: DomainEvent) -> bool:
    """Whether ``event`` may have freed a time someone waits for."""
    return event.kind in APPOINTMENT_KINDS or event.kind == CLINIC_CHANGED or event.kind in WAKING


class WaitlistRounds(DrainLoop):
    """Rounds of the waitlist, one after another while they find work, then asleep until an event that may have
    freed a time wakes them (``wakes``: the process's event fan-out, ``bootstrap.py``) or ``interval`` seconds
    pass. Started and stopped with the other background loops."""

    name = "waitlist-rounds"

    def __init__(self, rt: Runtime, *, interval: float) -> None:
        super().__init__(poll_seconds=interval)
        self.rt = rt

    async def round(self) -> bool:
        """One round; True when it offered or expired something (the next round looks again at once)."""
        done = await run_round(self.rt)
        if done.offered or done.expired:
            log.info("waitlist: %d offer(s) made, %d lapsed", done.offered, done.expired)
        return bool(done.offered or done.expired)
