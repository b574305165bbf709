"""The audit trail read back for administrators: filtered, one keyset page at a time or streamed whole as CSV or
JSON Lines (what writes it: ``entries.py``, and ``changes.py`` for administrative changes)."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from typing import Literal

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.audit import AuditFilter, AuditRow
from doctordesk.domain.keyset import Position
from doctordesk.domain.transfer.csv_cells import CsvWriter
from doctordesk.runtime import Runtime
from doctordesk.store.tables import AuditLog

EXPORT_BATCH = 500
CSV_COLUMNS = ("id", "at", "actor_id", "action", "entity", "entity_id", "details")
ExportFormat = Literal["csv", "jsonl"]


def _query(f: AuditFilter, after: Position | None, limit: int) -> Select[AuditLog]:
    q = filtered(f)
    if after is not None:
        q = q.where(or_(AuditLog.at < after.at, and_(AuditLog.at == after.at, AuditLog.id < after.id)))
    return q.order_by(AuditLog.at.desc(), AuditLog.id.desc()).limit(limit)


def filtered(audit_filter: AuditFilter) -> Select[AuditLog]:
    """The rows ``audit_filter`` selects, in no order."""
    q = select(AuditLog)
    if audit_filter.actor_id is not None:
        q = q.where(AuditLog.actor_id == audit_filter.actor_id)
    if audit_filter.appointment_id is not None:
        q = q.where(AuditLog.entity == "appointment", AuditLog.entity_id == audit_filter.appointment_id)
    if audit_filter.entity is not None:
        q = q.where(AuditLog.entity == audit_filter.entity)
    if audit_filter.action is not None:
        q = q.where(AuditLog.action == audit_filter.action)
    if audit_filter.since is not None:
        q = q.where(AuditLog.at >= audit_filter.since)
    if audit_filter.until is not None:
        q = q.where(AuditLog.at < audit_filter.until)
    return q


async def audit_page(
    session: AsyncSession, audit_filter: AuditFilter, *, after: Position | None, limit: int
) -> tuple[list[AuditRow], Position | None]:
    """One page, newest first, and the position to continue after (None on the last page)."""
    rows = (await session.execute(_query(audit_filter, after, limit + 1))).scalars().all()
    out = [AuditRow(r.id, r.at, r.actor_id, r.action, r.entity, r.entity_id, r.details or {}) for r in rows[:limit]]
    more = len(rows) > limit
    return out, (Position(out[-1].at, out[-1].id) if more and out else None)


async def export_rows(rt: Runtime, audit_filter: AuditFilter) -> AsyncIterator[AuditRow]:
    """Every matching row, newest first, read in batches (each batch its own short read, so a slow download holds
    no transaction open and rows appended meanwhile never shift the walk)."""
    after: Position | None = None
    while True:
        async with rt.db.read() as session:
            rows, after = await audit_page(session, audit_filter, after=after, limit=EXPORT_BATCH)
        for row in rows:
            yield row
        if after is None:
            return


async def export_lines(rt: Runtime, audit_filter: AuditFilter, fmt: ExportFormat) -> AsyncIterator[bytes]:
    """The export as encoded chunks: CSV (header row, details as JSON text, every cell written by ``CsvWriter`` so
    that no spreadsheet runs one) or JSON Lines (one object a line)."""
    if fmt == "csv":
        buffer = io.StringIO()
        writer = CsvWriter(buffer)
        writer.row(CSV_COLUMNS)
        async for row in export_rows(rt, audit_filter):
            writer.row(
                (
                    row.id,
                    row.at.isoformat(),
                    row.actor_id,
                    row.action,
                    row.entity,
                    row.entity_id,
                    json.dumps(row.details, sort_keys=True, separators=(",", ":")),
                )
            )
            if buffer.tell() >= 16_384:
                yield buffer.getvalue().encode()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue().encode()
        return
    async for row in export_rows(rt, audit_filter):
        yield (json.dumps(row.as_json(), sort_keys=True, separators=(",", ":")) + "\n").encode()
