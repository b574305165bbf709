"""The plain JSON read API for integrations."""

from __future__ import annotations

from datetime import UTC as _UTC
from datetime import date, datetime, time, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from doctordesk.domain.appointments.status import StatusName, codes_for_name
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.cursors import DEFAULT_LIMIT, MAX_CURSOR_CHARS, MAX_LIMIT, decode_cursor, encode_cursor
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.texts import N_
from doctordesk.services.appointments.reading import get_appointment, list_appointments, position_of
from doctordesk.web.deps import ActorDep, RuntimeDep
from doctordesk.web.params import DAY_IN_RANGE, STRICT_DATE, STRICT_ID, strict_int
from doctordesk.web.responses import SCREEN_RESPONSES

router = APIRouter(prefix="/api", tags=["read API"])

StatusFilter = Literal["requested", "approved", "pending-response", "declined", "canceled", "completed", "no-show"]


def appointment_json(appointment: AppointmentView) -> dict[str, Any]:
    return {
        "id": appointment.id,
        "status": {"code": int(appointment.status), "name": appointment.status.public_name},
        "start": appointment.local_start.isoformat(),
        "duration_minutes": appointment.duration_minutes,
        "doctor": {"id": appointment.doctor.id, "name": appointment.doctor.name},
        "location": {
            "id": appointment.location.id,
            "name": appointment.location.name,
            "timezone": appointment.location.timezone,
        },
        "patient": {"id": appointment.patient.id, "name": appointment.patient.name},
        "service": appointment.service,
        "chat_enabled": appointment.chat_enabled,
        "version": appointment.version,
    }


@router.get("/appointments", responses=SCREEN_RESPONSES)
async def appointments(
    rt: RuntimeDep,
    actor: ActorDep,
    status: Annotated[list[StatusFilter] | None, Query(description="Filter by status name (repeatable)")] = None,
    date_from: Annotated[
        date | None,
        Query(alias="from", description="First day (UTC), inclusive, YYYY-MM-DD", json_schema_extra=DAY_IN_RANGE),
        STRICT_DATE,
    ] = None,
    date_to: Annotated[
        date | None,
        Query(alias="to", description="Last day (UTC), inclusive, YYYY-MM-DD", json_schema_extra=DAY_IN_RANGE),
        STRICT_DATE,
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description="Appointments per page"), strict_int(maximum=MAX_LIMIT)
    ] = DEFAULT_LIMIT,
    cursor: Annotated[
        str | None,
        Query(max_length=MAX_CURSOR_CHARS, description="The previous page's `cursor`: continue after it"),
    ] = None,
) -> dict[str, Any]:
    """The appointments the caller may see, by start time then id, one page at a time. `cursor` in the answer
    fetches the next page (send it with the same filters); it is null on the last page."""
    if date_from and date_to and date_to < date_from:
        raise ValidationFailed(fields={"to": N_("Must not be before 'from'.")})
    after = decode_cursor(cursor) if cursor is not None else None
    codes = [c for name in status for c in codes_for_name(StatusName(name).value)] if status else None
    start_from = datetime.combine(date_from, time.min, tzinfo=_UTC) if date_from else None
    start_to = (
        datetime.combine(date_to + timedelta(days=1), time.min, tzinfo=_UTC) if date_to and date_to < date.max else None
    )
    async with rt.db.read() as session:
        views = await list_appointments(
            session, actor, statuses=codes, start_from=start_from, start_to=start_to, after=after, limit=limit + 1
        )
    page = views[:limit]
    more = len(views) > limit
    return {
        "appointments": [appointment_json(v) for v in page],
        "cursor": encode_cursor(position_of(page[-1])) if more else None,
    }


@router.get("/appointments/{appointment_id}", responses=SCREEN_RESPONSES)
async def appointment(
    rt: RuntimeDep, actor: ActorDep, appointment_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
) -> dict[str, Any]:
    """One appointment (404 when unknown or not the caller's)."""
    async with rt.db.read() as session:
        return appointment_json(await get_appointment(session, actor, appointment_id))
