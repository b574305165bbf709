"""Appending to the audit log (inside the caller's transaction)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.store import plain_rows
from doctordesk.store.tables import AuditLog


def _row(
    *,
    at: datetime,
    actor_id: int | None,
    action: str,
    entity: str,
    entity_id: int | None,
    details: dict[str, Any] | None,
) -> dict[str, Any]:
    return {"at": at, "actor_id": actor_id, "action": action, "entity": entity, "entity_id": entity_id,
            "details": details or {}}  # fmt: skip


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
    """An entry written with the session's next flush."""
    session.add(
        AuditLog(**_row(at=at, actor_id=actor_id, action=action, entity=entity, entity_id=entity_id, details=details))
    )


async def audit_now(
    session: AsyncSession,
    *,
    at: datetime,
    actor_id: int | None,
    action: str,
    entity: str,
    entity_id: int | None,
    details: dict[str, Any] | None = None,
) -> None:
    """An entry written at once by a plain INSERT (``store/plain_rows``): for the hot write paths."""
    row = _row(at=at, actor_id=actor_id, action=action, entity=entity, entity_id=entity_id, details=details)
    await plain_rows.add(session, AuditLog, row)
