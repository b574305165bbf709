"""Helpers for the administration tests: counting what a request wrote, reading the audit trail."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from doctordesk.runtime import Runtime
from doctordesk.store.tables import AuditLog, Location, User


async def counts(rt: Runtime) -> tuple[int, int, int]:
    """(users, locations, audit rows): a refused request changes none of them."""
    async with rt.db.read() as session:
        users = await session.scalar(select(func.count()).select_from(User))
        locations = await session.scalar(select(func.count()).select_from(Location))
        audit = await session.scalar(select(func.count()).select_from(AuditLog))
    return int(users or 0), int(locations or 0), int(audit or 0)


async def audit_rows(rt: Runtime, action: str) -> list[AuditLog]:
    async with rt.db.read() as session:
        return list(
            (await session.scalars(select(AuditLog).where(AuditLog.action == action).order_by(AuditLog.id))).all()
        )


def changed(row: AuditLog) -> tuple[Any, Any]:
    return row.details["before"], row.details["after"]
