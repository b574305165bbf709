"""Administration API: the audit trail, filtered and keyset-paged, and its streamed export (role admin only)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from doctordesk.domain.audit import AuditFilter
from doctordesk.domain.cursors import MAX_CURSOR_CHARS, decode_cursor, encode_cursor
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import MAX_ID, TEXT_PATTERN
from doctordesk.domain.roles import Role
from doctordesk.domain.texts import N_
from doctordesk.services.audit import trail as audit_trail
from doctordesk.web.deps import RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID, STRICT_INSTANT, YEARS, strict_int
from doctordesk.web.responses import ROLE_READ_RESPONSES
from doctordesk.web.routers.admin.models import instant, printable

TEXT: dict[str, Any] = {"pattern": TEXT_PATTERN}
router = APIRouter(
    prefix="/admin/audit",
    tags=["administration"],
    dependencies=[require_roles(Role.ADMIN)],
    responses=ROLE_READ_RESPONSES,
)

MEDIA = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl"}


def audit_filter(
    actor: Annotated[int | None, Query(ge=1, le=MAX_ID, description="Only this actor's rows"), STRICT_ID] = None,
    appointment: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only rows about this appointment"), STRICT_ID
    ] = None,
    action: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Exact action name", json_schema_extra=TEXT)
    ] = None,
    entity: Annotated[
        str | None,
        Query(min_length=1, max_length=32, description="user, location, appointment, ...", json_schema_extra=TEXT),
    ] = None,
    since: Annotated[
        datetime | None,
        Query(alias="from", description="From this instant (with offset), inclusive", json_schema_extra=YEARS),
        STRICT_INSTANT,
    ] = None,
    until: Annotated[
        datetime | None,
        Query(alias="to", description="Until this instant (with offset), exclusive", json_schema_extra=YEARS),
        STRICT_INSTANT,
    ] = None,
) -> AuditFilter:
    since, until = instant(since, "from"), instant(until, "to")
    action, entity = printable(action, "action"), printable(entity, "entity")
    if since is not None and until is not None and until < since:
        raise ValidationFailed(fields={"to": N_("Must not be before 'from'.")})
    return AuditFilter(
        actor_id=actor, appointment_id=appointment, action=action, entity=entity, since=since, until=until
    )  # fmt: skip


FilterDep = Annotated[AuditFilter, Depends(audit_filter)]


@router.get("")
async def list_audit(
    rt: RuntimeDep,
    audit_filter: FilterDep,
    limit: Annotated[int, Query(ge=1, le=500, description="Rows per page"), strict_int(minimum=1, maximum=500)] = 100,
    cursor: Annotated[
        str | None, Query(max_length=MAX_CURSOR_CHARS, description="The previous page's `cursor`")
    ] = None,
) -> dict[str, Any]:
    """Audit rows, newest first, filtered by actor, appointment, action, entity and time range; `cursor` fetches
    the next page with the same filters (null on the last page). Administrative changes carry
    `details.before` and `details.after`."""
    after = decode_cursor(cursor) if cursor is not None else None
    async with rt.db.read() as session:
        rows, position = await audit_trail.audit_page(session, audit_filter, after=after, limit=limit)
    return {"rows": [r.as_json() for r in rows], "cursor": encode_cursor(position) if position else None}


@router.get("/export", response_class=StreamingResponse, responses={200: {"content": {m: {} for m in MEDIA.values()}}})
async def export_audit(
    rt: RuntimeDep,
    audit_filter: FilterDep,
    format: Annotated[Literal["csv", "jsonl"], Query(description="csv or jsonl")] = "jsonl",
) -> StreamingResponse:
    """Every audit row matching the filters, newest first, streamed as CSV (header row; `details` as JSON text)
    or JSON Lines."""
    return StreamingResponse(
        audit_trail.export_lines(rt, audit_filter, format),
        media_type=MEDIA[format],
        headers={"Content-Disposition": f'attachment; filename="audit.{format}"', "Cache-Control": "no-store"},
    )
