"""Administration of locations: list, create and edit (name, address, time zone), each change audited.

Locations are never deleted: appointments, offers and history refer to them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.names import check_name
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import is_timezone
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.scheduling.clinic_facts import clinic_changed
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import Location


@dataclass(frozen=True, slots=True)
class LocationView:
    id: int
    name: str
    address: str
    timezone: str

    def audited(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class LocationChange:
    """New values; None leaves a field as it is."""

    name: str | None = None
    address: str | None = None
    timezone: str | None = None


def _view(loc: Location) -> LocationView:
    return LocationView(loc.id, loc.name, loc.address, loc.timezone)


def _check(change: LocationChange) -> None:
    fields: dict[str, str] = {}
    check_name(fields, "name", change.name, max_chars=128)
    # An address is a name too, and may be empty.
    if change.address is not None and change.address.strip():
        check_name(fields, "address", change.address, max_chars=255)
    if change.timezone is not None and not is_timezone(change.timezone):
        fields["timezone"] = N_("An IANA time zone, e.g. Europe/Berlin.")
    if fields:
        raise ValidationFailed(fields=fields)


async def list_locations(rt: Runtime) -> list[LocationView]:
    async with rt.db.read() as session:
        rows = (await session.execute(select(Location).order_by(Location.name, Location.id))).scalars().all()
    return [_view(loc) for loc in rows]


async def create_location(rt: Runtime, actor: Actor, change: LocationChange) -> LocationView:
    """A new location (name and time zone required)."""
    missing = {k: N_("Required.") for k in ("name", "timezone") if getattr(change, k) is None}
    if missing:
        raise ValidationFailed(fields=missing)
    _check(change)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        loc = Location(
            name=(change.name or "").strip(), address=(change.address or "").strip(), timezone=change.timezone or ""
        )
        uow.session.add(loc)
        await uow.session.flush()
        view = _view(loc)
        record_change(
            uow.session, actor, at=now, action="admin.location-created", entity="location", entity_id=loc.id,
            before=None, after=view.audited(),
        )  # fmt: skip
    await clinic_changed(rt)
    return view


async def update_location(rt: Runtime, actor: Actor, location_id: int, change: LocationChange) -> LocationView:
    """Edit a location. A new time zone re-reads its work hours as wall-clock times of that zone."""
    _check(change)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        loc = (
            await uow.session.execute(select(Location).where(Location.id == location_id).with_for_update())
        ).scalar_one_or_none()
        if loc is None:
            raise NotFound(N_("Location not found."))
        before = _view(loc)
        if change.name is not None:
            loc.name = change.name.strip()
        if change.address is not None:
            loc.address = change.address.strip()
        if change.timezone is not None:
            loc.timezone = change.timezone
        after = _view(loc)
        record_change(
            uow.session, actor, at=now, action="admin.location-updated", entity="location", entity_id=loc.id,
            before=before.audited(), after=after.audited(),
        )  # fmt: skip
    await clinic_changed(rt)
    return after
