"""Reading appointments with the viewer's rights applied in one place, and the appointment list screen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.appointments import AppointmentView, Party, Place, can_view
from doctordesk.domain.errors import NotFound
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.status import Status
from doctordesk.runtime import Runtime
from doctordesk.screens import appointment_list
from doctordesk.screens.protocol import Layout, Page
from doctordesk.screens.state import Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.store import chat_repo
from doctordesk.store.tables import Appointment, Location, Patient, User

_Doctor = aliased(User)
Query = Select[Appointment, str, Location, str]


@dataclass(frozen=True, slots=True)
class ListPosition:
    """A place in the list's order (start time, then id: unique, so a page ends at exactly one row)."""

    start: datetime
    id: int

    @classmethod
    def of(cls, view: AppointmentView) -> ListPosition:
        return cls(view.start, view.id)


def _base() -> Query:
    query: Query = (
        select(Appointment, _Doctor.display_name, Location, Patient.name)
        .join(_Doctor, _Doctor.id == Appointment.doctor_id)
        .join(Location, Location.id == Appointment.location_id)
        .join(Patient, Patient.id == Appointment.patient_id)
    )
    return query


def _visible_to(query: Query, actor: Actor) -> Query:
    if actor.role is Role.DOCTOR:
        return query.where(Appointment.doctor_id == actor.user_id)
    if actor.role is Role.PATIENT:
        return query.where(Appointment.patient_id == (actor.patient_id or -1))
    return query


def _view(row: Any) -> AppointmentView:
    a, doctor_name, loc, patient_name = row
    return AppointmentView(
        id=a.id,
        status=Status(a.status),
        start=a.start_at,
        duration_minutes=a.duration_minutes,
        doctor=Party(a.doctor_id, doctor_name),
        location=Place(loc.id, loc.name, loc.timezone),
        patient=Party(a.patient_id, patient_name),
        service=a.service,
        chat_enabled=a.chat_enabled,
        disclaimer_required=a.disclaimer_required,
        prescription_needed=a.prescription_needed,
        version=a.version,
        updated_at=a.updated_at,
    )


async def list_appointments(
    session: AsyncSession,
    actor: Actor,
    *,
    statuses: Sequence[int] | None = None,
    start_from: datetime | None = None,
    start_to: datetime | None = None,
    after: ListPosition | None = None,
    limit: int = 500,
) -> list[AppointmentView]:
    """The appointments the actor may see, by start time then id; ``after`` continues past a position (keyset
    paging: rows inserted meanwhile never shift the next page)."""
    query = _visible_to(_base(), actor)
    if statuses:
        query = query.where(Appointment.status.in_(list(statuses)))
    if start_from is not None:
        query = query.where(Appointment.start_at >= start_from)
    if start_to is not None:
        query = query.where(Appointment.start_at < start_to)
    if after is not None:
        # (start_at, id) > after, spelled so that the start bound is an index range on either index by start.
        query = query.where(
            Appointment.start_at >= after.start,
            or_(Appointment.start_at > after.start, Appointment.id > after.id),
        )
    rows = await session.execute(query.order_by(Appointment.start_at, Appointment.id).limit(limit))
    views = [_view(r) for r in rows]
    if actor.role is Role.PATIENT or not views:
        return views
    # The viewer's unread chat messages per appointment: one grouped query for the whole list.
    unread = await chat_repo.unread_counts(session, actor.user_id, [v.id for v in views])
    return [replace(v, unread=unread[v.id]) if v.id in unread else v for v in views]


async def get_appointment(session: AsyncSession, actor: Actor, appointment_id: int) -> AppointmentView:
    """One appointment; NotFound when unknown or not the actor's to see (ids cannot be probed)."""
    row = (await session.execute(_base().where(Appointment.id == appointment_id))).first()
    if row is None:
        raise NotFound("Appointment not found.")
    view = _view(row)
    if not can_view(actor, doctor_id=view.doctor.id, patient_id=view.patient.id):
        raise NotFound("Appointment not found.")
    return view


# --- the appointment list screen ----------------------------------------------------------------------------------


def list_viewing(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    """The appointment list screen, as ``actor`` sees it: ``page()`` for the PUT, ``poll()`` for the PATCH."""
    timeout = rt.settings.poll_list_seconds

    async def render() -> Page:
        async with rt.db.read() as session:
            views = await list_appointments(session, actor)
        return appointment_list.render(views, actor, now=rt.clock.now(), layout=layout, timeout=timeout)

    return Viewing(
        rt.screens, rt.wall(), Viewer(client_id, actor.user_id), appointment_list.shown(actor), timeout, render
    )
