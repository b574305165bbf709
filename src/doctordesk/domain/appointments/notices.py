"""In-app notices: what the appointment list shows a person about changes others made to their appointments.

A status change that tells someone (the doctor when a patient answers offers or cancels, the patient when the
doctor decides) leaves them a notice with the same text as the push notification. The list shows the newest few;
each is dismissed by its owner, or all at once. A new request is not a notice: it already stands first in the
doctor's "Awaiting your decision"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# The list shows at most this many notices, newest first; "Dismiss all" clears the rest too.
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Notice:
    id: int
    text: str
    at: datetime
    appointment_id: int | None
    # Which appointment it is about, as people name it: its start in its location's zone.
    start: datetime | None = None
    timezone: str | None = None
