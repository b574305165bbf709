"""Administration API: a doctor's work hours per location (weekly rules) and dated exceptions (role admin only).

A change that would leave approved appointments outside the hours answers ``applied: false`` with those
appointments in ``conflicts`` and writes nothing; the same request with ``confirm: true`` applies it. Appointments
are never moved.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import HH_MM_PATTERN, Hours, HoursException
from doctordesk.services.admin import hours as admin_hours
from doctordesk.services.admin.hours import HoursChange
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID, Day, WallTime
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin.models import Strict


def hh_mm(schema: dict[str, Any]) -> None:
    """Times are HH:MM (no seconds, no zone): stated as a pattern instead of the looser ``time`` format."""
    for option in [schema, *schema.get("anyOf", [])]:
        if option.get("format") == "time":
            del option["format"]
            option["pattern"] = HH_MM_PATTERN


router = APIRouter(
    prefix="/admin", tags=["administration"], dependencies=[require_roles(Role.ADMIN)], responses=SUBMIT_RESPONSES
)

Id = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]


class Block(Strict):
    weekday: int = Field(ge=0, le=6, description="0 = Monday ... 6 = Sunday")
    opens: WallTime = Field(description="Local wall-clock time at the location, HH:MM", json_schema_extra=hh_mm)
    closes: WallTime = Field(description="Local wall-clock time at the location, HH:MM", json_schema_extra=hh_mm)


class WeeklyRules(Strict):
    rules: list[Block] = Field(max_length=50)
    confirm: bool = Field(False, description="Apply even if approved appointments end up outside the hours")


class ExceptionCreate(Strict):
    day: Day = Field(description="The location's local date")
    kind: Literal["holiday", "absence", "extra"]
    location_id: int | None = Field(None, ge=1, le=MAX_ID, description="Omit: every location of the doctor")
    opens: WallTime | None = Field(
        None, description="extra: required; absence: with closes for part of the day", json_schema_extra=hh_mm
    )
    closes: WallTime | None = Field(None, json_schema_extra=hh_mm)
    note: str = Field("", max_length=255)
    confirm: bool = False


class Confirm(Strict):
    confirm: bool = False


def change_json(change: HoursChange) -> dict[str, Any]:
    return {
        "applied": change.applied,
        "conflicts": [asdict(c) for c in change.conflicts],
        "exception_id": change.exception_id,
    }


@router.get("/doctors/{doctor_id}/hours")
async def get_hours(rt: RuntimeDep, doctor_id: Id) -> dict[str, Any]:
    """The doctor's weekly rules per location and the dated exceptions in force."""
    return await admin_hours.get_hours(rt, doctor_id)


@router.put("/doctors/{doctor_id}/hours/{location_id}")
async def set_weekly(
    rt: RuntimeDep, actor: ActorDep, doctor_id: Id, location_id: Id, body: WeeklyRules
) -> dict[str, Any]:
    """Replace the doctor's weekly rules at a location. `conflicts`: approved appointments from now on that the new
    rules leave outside the hours; without `confirm` they stop the change (`applied: false`, nothing written)."""
    blocks = [Hours(b.weekday, b.opens, b.closes) for b in body.rules]
    return change_json(await admin_hours.set_weekly(rt, actor, doctor_id, location_id, blocks, confirm=body.confirm))


@router.post("/doctors/{doctor_id}/hours-exceptions")
async def add_exception(rt: RuntimeDep, actor: ActorDep, doctor_id: Id, body: ExceptionCreate) -> dict[str, Any]:
    """Add a holiday, an absence (whole day, or opens-closes) or an extra day (opens-closes) on a local date.
    Conflicts as for the weekly rules. `opens` and `closes` are wall-clock times at the location (at every
    location when none is named): a time the clocks jump over that day is refused (422 naming the jump), a time
    they pass twice means its first occurrence; `times` gives each as an instant with the location's offset."""
    exception = HoursException(body.day, body.kind, body.location_id, body.opens, body.closes)
    change = await admin_hours.add_exception(rt, actor, doctor_id, exception, note=body.note, confirm=body.confirm)
    return {**change_json(change), "times": [asdict(t) for t in change.times]}


@router.post("/hours-exceptions/{exception_id}/remove")
async def remove_exception(rt: RuntimeDep, actor: ActorDep, exception_id: Id, body: Confirm) -> dict[str, Any]:
    """Withdraw an exception (it stays in the records, marked removed). Conflicts as for the weekly rules."""
    return change_json(await admin_hours.remove_exception(rt, actor, exception_id, confirm=body.confirm))
