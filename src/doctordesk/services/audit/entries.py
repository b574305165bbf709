"""Appending to the audit log (inside the caller's transaction)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict, Unpack

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.store import plain_rows
from doctordesk.store.tables import AuditLog


class AuditEntry(TypedDict):
    """One audit log entry: when, who (None for the system), what was done to which entity, and its details."""

    at: datetime
    actor_id: int | None
    action: str
    entity: str
    entity_id: int | None
    details: NotRequired[dict[str, Any] | None]


def _row(entry: AuditEntry) -> dict[str, Any]:
    return {**entry, "details": entry.get("details") or {}}


def audit(session: AsyncSession, **entry: Unpack[AuditEntry]) -> None:
    """An entry written with the session's next flush."""
    session.add(AuditLog(**_row(entry)))


async def audit_now(session: AsyncSession, **entry: Unpack[AuditEntry]) -> None:
    """An entry written at once by a plain INSERT (``store/plain_rows``): for the hot write paths."""
    await plain_rows.add(session, AuditLog, _row(entry))
