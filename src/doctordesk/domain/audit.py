"""The audit trail as plain values: which rows an administrator asks for, and one row as read back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which rows: by actor, appointment, action, entity and a time range [since, until)."""

    actor_id: int | None = None
    appointment_id: int | None = None
    action: str | None = None
    entity: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class AuditRow:
    id: int
    at: datetime
    actor_id: int | None
    action: str
    entity: str
    entity_id: int | None
    details: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at.isoformat(),
            "actor_id": self.actor_id,
            "action": self.action,
            "entity": self.entity,
            "entity_id": self.entity_id,
            "details": self.details,
        }
