"""Administration API: locations and their time zones (role admin only)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.names import NAME_PATTERN, OPTIONAL_NAME_PATTERN
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import TIMEZONES
from doctordesk.services.admin import locations as admin_locations
from doctordesk.services.admin.locations import LocationChange
from doctordesk.web.bodies import stated
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin.models import Strict

# Time zones: the IANA names the service knows (domain/scheduling/suggestions.py), stated in /openapi.json.
ZONES: dict[str, Any] = {"enum": list(TIMEZONES)}
ZONES_OR_NULL: dict[str, Any] = {"enum": [*TIMEZONES, None]}
# A name is counted without the white space around it: something besides white space.
NAME = stated(pattern=NAME_PATTERN)
# An address follows the name rule too (domain/names.py), and may be empty.
ADDRESS = stated(pattern=OPTIONAL_NAME_PATTERN)
router = APIRouter(
    prefix="/admin", tags=["administration"], dependencies=[require_roles(Role.ADMIN)], responses=SUBMIT_RESPONSES
)


class LocationCreate(Strict):
    name: str = Field(min_length=1, max_length=128, json_schema_extra=NAME)
    address: str = Field("", max_length=255, json_schema_extra=ADDRESS)
    timezone: str = Field(description="IANA time zone, e.g. Europe/Berlin", json_schema_extra=ZONES)


class LocationUpdate(Strict):
    name: str | None = Field(None, min_length=1, max_length=128, json_schema_extra=NAME)
    address: str | None = Field(None, max_length=255, json_schema_extra=ADDRESS)
    timezone: str | None = Field(None, json_schema_extra=ZONES_OR_NULL)


@router.get("/locations")
async def list_locations(rt: RuntimeDep) -> dict[str, Any]:
    """Every location, by name."""
    return {"locations": [asdict(v) for v in await admin_locations.list_locations(rt)]}


@router.post("/locations", status_code=201)
async def create_location(rt: RuntimeDep, actor: ActorDep, body: LocationCreate) -> dict[str, Any]:
    """Create a location."""
    return asdict(await admin_locations.create_location(rt, actor, LocationChange(**body.model_dump())))


@router.post("/locations/{location_id}")
async def update_location(
    rt: RuntimeDep, actor: ActorDep, location_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID], body: LocationUpdate
) -> dict[str, Any]:
    """Edit a location's name, address or time zone (omitted fields stay). Locations are never deleted."""
    return asdict(await admin_locations.update_location(rt, actor, location_id, LocationChange(**body.model_dump())))
