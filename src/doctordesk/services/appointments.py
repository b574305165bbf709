"""Reading appointments with the viewer's rights applied in one place (the list screen's sections:
``services.appointment_list``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.appointments import AppointmentView, Party, Place, can_view
from doctordesk.domain.errors import NotFound
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.status import Status
from doctordesk.domain.texts import N_
from doctordesk.store import chat_repo, keyset
from doctordesk.store.tables import Appointment, Location, Patient, User

_Doctor = aliased(User)
Query = Select[Appointment, str, Location, str]
AnySelect = TypeVar("AnySelect", bound=Select[*tuple[Any, ...]])


def position_of(view: AppointmentView) -> Position:
    """Where an appointment stands in the lists' order (start time, then id)."""
    return Position(view.start, view.id)


def base_query() -> Query:
    """Appointments with the names and place the views show (``view_of`` turns a row into a view)."""
    query: Query = (
        select(Appointment, _Doctor.display_name, Location, Patient.name)
        .join(_Doctor, _Doctor.id == Appointment.doctor_id)
        .join(Location, Location.id == Appointment.location_id)
        .join(Patient, Patient.id == Appointment.patient_id)
    )
    return query


def visible_to(query: AnySelect, actor: Actor) -> AnySelect:
    """Only the appointments ``actor`` may see: a doctor's own, a patient's own, everything for support and
    admins."""
    if actor.role is Role.DOCTOR:
        return query.where(Appointment.doctor_id == actor.user_id)
    if actor.role is Role.PATIENT:
        return query.where(Appointment.patient_id == (actor.patient_id or -1))
    return query


def view_of(row: Any) -> AppointmentView:
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
        request_note=a.request_note,
        decline_reason=a.decline_reason,
    )


async def list_appointments(
    session: AsyncSession,
    actor: Actor,
    *,
    statuses: Sequence[int] | None = None,
    start_from: datetime | None = None,
    start_to: datetime | None = None,
    after: Position | None = None,
    limit: int = 500,
) -> list[AppointmentView]:
    """The appointments the actor may see, by start time then id; ``after`` continues past a position (keyset
    paging: rows inserted meanwhile never shift the next page)."""
    query = visible_to(base_query(), actor)
    if statuses:
        query = query.where(Appointment.status.in_(list(statuses)))
    if start_from is not None:
        query = query.where(Appointment.start_at >= start_from)
    if start_to is not None:
        query = query.where(Appointment.start_at < start_to)
    if after is not None:
        query = query.where(keyset.beyond(Appointment.start_at, Appointment.id, after))
    rows = await session.execute(query.order_by(*keyset.ordered(Appointment.start_at, Appointment.id)).limit(limit))
    return await with_unread(session, actor, [view_of(r) for r in rows])


async def with_unread(session: AsyncSession, actor: Actor, views: list[AppointmentView]) -> list[AppointmentView]:
    """The views with the viewer's unread chat messages per appointment: one grouped query for them all."""
    if actor.role is Role.PATIENT or not views:
        return views
    unread = await chat_repo.unread_counts(session, actor.user_id, [v.id for v in views])
    return [replace(v, unread=unread[v.id]) if v.id in unread else v for v in views]


async def get_appointment(session: AsyncSession, actor: Actor, appointment_id: int) -> AppointmentView:
    """One appointment; NotFound when unknown or not the actor's to see (ids cannot be probed)."""
    row = (await session.execute(base_query().where(Appointment.id == appointment_id))).first()
    if row is None:
        raise NotFound(N_("Appointment not found."))
    view = view_of(row)
    if not can_view(actor, doctor_id=view.doctor.id, patient_id=view.patient.id):
        raise NotFound(N_("Appointment not found."))
    return view
