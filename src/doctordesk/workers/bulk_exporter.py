"""The bulk exporter: writes queued FHIR ``$export`` jobs one at a time and deletes expired ones with their files
(docs/fhir.md#bulk-export). Runs in the server process (``DOCTORDESK_BULK_IN_PROCESS``) and in ``doctordesk
worker``; several may run at once (each job is leased to one of them)."""

from __future__ import annotations

import logging

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.realtime.lease import DrainLoop
from doctordesk.services.fhir.bulk import writer
from doctordesk.store.db import Database

log = logging.getLogger(__name__)


class BulkExporter(DrainLoop):
    name = "bulk-exporter"

    def __init__(self, db: Database, *, settings: Settings, clock: Clock) -> None:
        super().__init__(poll_seconds=settings.bulk_poll_seconds)
        self.db = db
        self.settings = settings
        self.clock = clock

    async def round(self) -> bool:
        """Delete what has expired, then write one due job; True when a job was found (there may be more). A round
        with neither is one read."""
        if not await writer.anything_to_do(self.db, now=self.clock.now()):
            return False
        await writer.sweep(self.db, now=self.clock.now(), settings=self.settings)
        claimed = await writer.claim(self.db, now=self.clock.now(), settings=self.settings)
        if claimed is None:
            return False
        done = await writer.run(
            self.db, claimed, settings=self.settings, clock=self.clock, stopping=lambda: self.stopping
        )
        log.info("bulk export %s (claim %s): %s", claimed.job_id, claimed.attempt, "complete" if done else "left")
        return not self.stopping
