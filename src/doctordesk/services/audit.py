"""Appending to the audit log (inside the caller's transaction)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.store.tables import AuditLog


def audit(
    session: AsyncSession,
    *,
    at: datetime,
    actor_id: int | None,
    action: str,
    entity: str,
    entity_id: int | None,
    details: dict[str, Any] | None = None,
) -> None:
    session.add(
        AuditLog(at=at, actor_id=actor_id, action=action, entity=entity, entity_id=entity_id, details=details or {})
    )
