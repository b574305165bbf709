"""Reading appointments with the viewer's rights applied in one place (the list screen's sections:
``services.appointments.list_screen``)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar, cast

from sqlalchemy import Select, Table, bindparam, exists, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView, Party, Place, can_view
from doctordesk.domain.errors import NotFound
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.store import chat_repo, keyset, sqlite_inline
from doctordesk.store.admin_tables import DoctorSettings
from doctordesk.store.mail_tables import AppointmentConfirmation
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
    admins; and of those only the launch patient's when a SMART token's patient scopes narrow it."""
    if actor.patient_context is not None:
        query = query.where(Appointment.patient_id == actor.patient_context)
    if actor.role is Role.DOCTOR:
        return query.where(Appointment.doctor_id == actor.user_id)
    if actor.role is Role.PATIENT:
        return query.where(Appointment.patient_id == (actor.patient_id or -1))
    return query


def patients_visible_to(query: AnySelect, actor: Actor) -> AnySelect:
    """``query`` (over patients) narrowed to those ``actor`` may see: a patient themself, a doctor the patients
    they have appointments with, support and admins all; of those only the launch patient when a SMART token's
    patient scopes narrow it."""
    if actor.patient_context is not None:
        query = query.where(Patient.id == actor.patient_context)
    if actor.role is Role.PATIENT:
        return query.where(Patient.id == (actor.patient_id or -1))
    if actor.role is Role.DOCTOR:
        mine = select(Appointment.id).where(
            Appointment.patient_id == Patient.id, Appointment.doctor_id == actor.user_id
        )
        return query.where(exists(mine))
    return query


def view_of(row: Any) -> AppointmentView:
    """The view of a ``base_query`` row."""
    a, doctor_name, loc, patient_name = row
    return appointment_view(a, doctor_name, Place(loc.id, loc.name, loc.timezone), patient_name)


def appointment_view(appointment: Appointment, doctor_name: str, place: Place, patient_name: str) -> AppointmentView:
    return AppointmentView(
        id=appointment.id,
        status=Status(appointment.status),
        start=appointment.start_at,
        duration_minutes=appointment.duration_minutes,
        doctor=Party(appointment.doctor_id, doctor_name),
        location=place,
        patient=Party(appointment.patient_id, patient_name),
        service=appointment.service,
        chat_enabled=appointment.chat_enabled,
        disclaimer_required=appointment.disclaimer_required,
        prescription_needed=appointment.prescription_needed,
        version=appointment.version,
        updated_at=appointment.updated_at,
        request_note=appointment.request_note,
        decline_reason=appointment.decline_reason,
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
    return await with_viewer_marks(session, actor, [view_of(r) for r in rows])


async def with_viewer_marks(session: AsyncSession, actor: Actor, views: list[AppointmentView]) -> list[AppointmentView]:
    """The views with the viewer's unread chat messages per appointment (one grouped query for them all) and
    the patients' confirmations of approved ones."""
    if actor.role is Role.PATIENT or not views:
        return views
    unread = await chat_repo.unread_counts(session, actor.user_id, [v.id for v in views])
    views = [replace(v, unread=unread[v.id]) if v.id in unread else v for v in views]
    return await with_confirmations(session, views)


async def with_confirmations(session: AsyncSession, views: list[AppointmentView]) -> list[AppointmentView]:
    """The views with ``confirmed`` set where the patient confirmed an approved appointment at its start."""
    approved = {v.id: v.start for v in views if v.status is Status.APPROVED}
    if not approved:
        return views
    rows = await sqlite_inline.planned_rows(session, _confirmations(), {"ids": sorted(approved)})
    done = {i for i, start in rows if approved.get(i) == start}
    return [replace(v, confirmed=True) if v.id in done else v for v in views]


@functools.cache
def _confirmations() -> Select[int, datetime]:
    """``with_confirmations``'s statement, built once (every list render reads it: building and keying it cost more
    than running it), the appointments an expanding parameter."""
    c = cast(Table, AppointmentConfirmation.__table__).c
    return select(c.appointment_id, c.start_at).where(c.appointment_id.in_(bindparam("ids", expanding=True)))


async def get_appointment(session: AsyncSession, actor: Actor, appointment_id: int) -> AppointmentView:
    """One appointment; NotFound when unknown or not the actor's to see (ids cannot be probed)."""
    view, _ = await _one(session, actor, appointment_id, chat_setting=False)
    return view


async def get_appointment_and_chat_setting(
    session: AsyncSession, actor: Actor, appointment_id: int
) -> tuple[AppointmentView, bool | None]:
    """``get_appointment`` and, in the same statement, whether an admin switched chat on or off for its doctor
    (None: never set)."""
    return await _one(session, actor, appointment_id, chat_setting=True)


async def _one(
    session: AsyncSession, actor: Actor, appointment_id: int, *, chat_setting: bool
) -> tuple[AppointmentView, bool | None]:
    row = (await session.execute(_one_statement(chat_setting), {"id": appointment_id})).first()
    if row is None:
        raise NotFound(N_("Appointment not found."))
    view = view_of_columns(row)
    if not can_view(actor, doctor_id=view.doctor.id, patient_id=view.patient.id):
        raise NotFound(N_("Appointment not found."))
    return view, row.doctor_chat if chat_setting else None


def view_of_columns(row: Any) -> AppointmentView:
    """The view of a ``view_columns`` row (unpacked by position: a list render makes one per row it shows, and
    reading a row's columns by name costs several times more)."""
    (id_, status, start, duration, doctor_id, doctor_name, location_id, location_name, timezone, patient_id,
     patient_name, service, chat_enabled, disclaimer_required, prescription_needed, version, updated_at, request_note,
     decline_reason) = row[:19]  # fmt: skip
    return AppointmentView(
        id=id_,
        status=Status(status),
        start=start,
        duration_minutes=duration,
        doctor=Party(doctor_id, doctor_name),
        location=Place(location_id, location_name, timezone),
        patient=Party(patient_id, patient_name),
        service=service,
        chat_enabled=chat_enabled,
        disclaimer_required=disclaimer_required,
        prescription_needed=prescription_needed,
        version=version,
        updated_at=updated_at,
        request_note=request_note,
        decline_reason=decline_reason,
    )


APPOINTMENTS = cast(Table, Appointment.__table__)


def view_columns() -> Select[*tuple[Any, ...]]:
    """Appointments with the names and place their views show, as plain columns (no ORM entities: the rows are
    tuples, which is what a hot read wants); ``view_of_columns`` turns a row into a view."""
    locations, patients = (cast(Table, t.__table__) for t in (Location, Patient))
    a, loc, p = APPOINTMENTS.c, locations.c, patients.c
    doctor = cast(Table, User.__table__).alias("doctor")
    return (
        select(
            a.id,
            a.status,
            a.start_at,
            a.duration_minutes,
            a.doctor_id,
            doctor.c.display_name.label("doctor_name"),
            loc.id.label("location_id"),
            loc.name.label("location_name"),
            loc.timezone,
            a.patient_id,
            p.name.label("patient_name"),
            a.service,
            a.chat_enabled,
            a.disclaimer_required,
            a.prescription_needed,
            a.version,
            a.updated_at,
            a.request_note,
            a.decline_reason,
        )
        .join_from(APPOINTMENTS, doctor, doctor.c.id == a.doctor_id)
        .join(locations, loc.id == a.location_id)
        .join(patients, p.id == a.patient_id)
    )


# What ``visible_to_bound`` narrows by: the viewer's kind (doctor, patient, everyone else) and whether a SMART
# launch's patient narrows it further. Statements built for one shape serve every viewer of that shape.
Visibility = tuple[str, bool]


def visibility(actor: Actor) -> Visibility:
    """The shape of ``actor``'s rights, for statements built once and run with ``visibility_params``."""
    kind = actor.role.value if actor.role in (Role.DOCTOR, Role.PATIENT) else "all"
    return kind, actor.patient_context is not None


def visibility_params(actor: Actor) -> dict[str, int]:
    """The values of ``visible_to_bound``'s parameters for ``actor``."""
    params = {"viewer": actor.user_id if actor.role is Role.DOCTOR else (actor.patient_id or -1)}
    if actor.patient_context is not None:
        params["viewer_context"] = actor.patient_context
    return params


def visible_to_bound(query: AnySelect, shape: Visibility) -> AnySelect:
    """``visible_to`` as parameters (``visibility_params``): the same rows, in a statement that can be built once
    and kept for every viewer of the shape (building and keying a statement costs more than running it)."""
    kind, narrowed = shape
    a = APPOINTMENTS.c
    if narrowed:
        query = query.where(a.patient_id == bindparam("viewer_context"))
    if kind == Role.DOCTOR.value:
        return query.where(a.doctor_id == bindparam("viewer"))
    if kind == Role.PATIENT.value:
        return query.where(a.patient_id == bindparam("viewer"))
    return query


@functools.cache
def _one_statement(chat_setting: bool) -> Any:
    """One appointment with the names and place its view shows, as plain SQL built once (every chat send and
    poll reads one): no ORM entities."""
    query = view_columns().where(APPOINTMENTS.c.id == bindparam("id"))
    if chat_setting:
        settings = cast(Table, DoctorSettings.__table__)
        query = query.add_columns(settings.c.chat_enabled.label("doctor_chat")).outerjoin(
            settings, settings.c.user_id == APPOINTMENTS.c.doctor_id
        )
    return query
