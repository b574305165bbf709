"""A mail as the administration shows it (the outbox row's record, without its content)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class MailView:
    id: int
    message_id: str
    kind: str
    recipient: str
    appointment_id: int | None
    status: str
    attempts: int
    created_at: datetime
    last_attempt_at: datetime | None
    last_code: int | None
    last_error: str | None
