"""The reminder sender: a periodic round (``DOCTORDESK_REMINDER_POLL_SECONDS``) that sends the reminders due now
(``services/reminders/sender.py``) on the process's clock, then wakes the mail and push senders. It runs in the
server (``DOCTORDESK_REMINDER_IN_PROCESS``) and in ``doctordesk worker``; several at once never send a reminder
twice (its row is unique)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.lease import DrainLoop
from doctordesk.services.reminders.sender import send_due
from doctordesk.store.db import Database

Queued = Callable[[list[DomainEvent]], Awaitable[None]]


class ReminderSender(DrainLoop):
    name = "reminder-sender"

    def __init__(self, db: Database, *, settings: Settings, clock: Clock, on_queued: Queued) -> None:
        super().__init__(poll_seconds=settings.reminder_poll_seconds)
        self.db = db
        self.settings = settings
        self.clock = clock
        self.on_queued = on_queued

    async def round(self) -> bool:
        """Send what is due now; False: the next round waits for the poll (reminders are due by the clock, not by
        a change)."""
        events = await send_due(self.db, self.settings, now=self.clock.now())
        if events:
            await self.on_queued(events)
        return False
