"""Administration of work hours: a doctor's weekly blocks per location and dated exceptions (holiday, absence,
extra day).

A change that would leave approved appointments outside the hours is not applied unless confirmed: the answer
lists those appointments (``applied`` false) and nothing is written; sent again with ``confirm`` it is applied
and the appointments stay exactly where they are (they are listed again, to be dealt with one by one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling.exception_times import ExceptionTimes, exception_times, time_errors
from doctordesk.domain.scheduling.suggestions import (
    Hours,
    HoursException,
    Proposal,
    Schedule,
    exception_errors,
    hours_errors,
    left_outside,
    utc_to_local,
)
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.scheduling.busy_times import lock_schedules
from doctordesk.services.scheduling.clinic_facts import clinic_changed
from doctordesk.services.uow import unit_of_work
from doctordesk.store.admin_tables import WorkHoursException
from doctordesk.store.tables import Appointment, Location, User, WorkHours

MAX_BLOCKS = 50


@dataclass(frozen=True, slots=True)
class Conflict:
    """An approved appointment the change leaves outside the hours."""

    appointment_id: int
    location_id: int
    start: str  # local time at the location, ISO 8601 with offset
    duration_minutes: int


@dataclass(frozen=True, slots=True)
class HoursChange:
    applied: bool
    conflicts: list[Conflict]
    exception_id: int | None = None
    # An added exception's times as moments with their offsets at each location it applies to.
    times: tuple[ExceptionTimes, ...] = ()


def hours_json(hours: Hours) -> dict[str, Any]:
    return {"weekday": hours.weekday, "opens": hours.opens.strftime("%H:%M"), "closes": hours.closes.strftime("%H:%M")}


def exception_json(row: WorkHoursException) -> dict[str, Any]:
    return {
        "id": row.id,
        "location_id": row.location_id,
        "day": row.day.isoformat(),
        "kind": row.kind,
        "opens": row.start_time.strftime("%H:%M") if row.start_time else None,
        "closes": row.end_time.strftime("%H:%M") if row.end_time else None,
        "note": row.note,
    }


async def _doctor(session: AsyncSession, doctor_id: int) -> None:
    role = await session.scalar(select(User.role).where(User.id == doctor_id))
    if role != Role.DOCTOR:
        raise NotFound(N_("Doctor not found."))


@asynccontextmanager
async def _doctor_change(rt: Runtime, doctor_id: int, errors: dict[str, str]) -> AsyncIterator[AsyncSession]:
    """The session of a unit of work changing a doctor's hours: refused with ``errors`` before it starts, "not
    found" for an unknown doctor."""
    if errors:
        raise ValidationFailed(fields=errors)
    async with unit_of_work(rt) as uow:
        await _doctor(uow.session, doctor_id)
        yield uow.session


async def _schedule(session: AsyncSession, doctor_id: int) -> tuple[Schedule, list[WorkHoursException]]:
    hours: dict[tuple[int, int], list[Hours]] = defaultdict(list)
    for h in (await session.execute(select(WorkHours).where(WorkHours.doctor_id == doctor_id))).scalars():
        hours[(doctor_id, h.location_id)].append(Hours(h.weekday, h.start_time, h.end_time))
    rows = list(
        (
            await session.execute(
                select(WorkHoursException)
                .where(WorkHoursException.doctor_id == doctor_id, WorkHoursException.removed_at.is_(None))
                .order_by(WorkHoursException.day, WorkHoursException.id)
            )
        ).scalars()
    )
    exceptions = [HoursException(r.day, r.kind, r.location_id, r.start_time, r.end_time) for r in rows]
    return Schedule(dict(hours), {doctor_id: exceptions}), rows


async def _conflicts(
    session: AsyncSession, doctor_id: int, now: datetime, *, before: Schedule, after: Schedule
) -> list[Conflict]:
    """Approved appointments of the doctor from now on that the change leaves outside the hours."""
    rows = (
        await session.execute(
            select(Appointment.id, Appointment.location_id, Appointment.start_at, Appointment.duration_minutes)
            .where(
                Appointment.doctor_id == doctor_id,
                Appointment.status == int(Status.APPROVED),
                Appointment.start_at >= now,
            )
            .order_by(Appointment.start_at, Appointment.id)
        )
    ).all()
    locations = await session.execute(select(Location.id, Location.timezone))
    zones: dict[int, str] = {row[0]: row[1] for row in locations}
    booked = [Proposal(a_id, doctor_id, loc, start, minutes) for a_id, loc, start, minutes in rows]
    outside = left_outside(booked, zones, before=before, after=after)
    return [
        Conflict(p.n, p.location_id, utc_to_local(p.start, zones[p.location_id]).isoformat(), p.duration_minutes)
        for p in outside
    ]


async def get_hours(rt: Runtime, doctor_id: int) -> dict[str, Any]:
    """The doctor's weekly blocks per location and the exceptions in force."""
    async with rt.db.read() as session:
        await _doctor(session, doctor_id)
        schedule, rows = await _schedule(session, doctor_id)
    weekly = [
        {"location_id": loc, "rules": [hours_json(h) for h in sorted(blocks, key=lambda h: (h.weekday, h.opens))]}
        for (_, loc), blocks in sorted(schedule.hours.items())
    ]
    return {"doctor_id": doctor_id, "weekly": weekly, "exceptions": [exception_json(r) for r in rows]}


async def set_weekly(
    rt: Runtime, actor: Actor, doctor_id: int, location_id: int, blocks: Sequence[Hours], *, confirm: bool
) -> HoursChange:
    """Replace the doctor's weekly blocks at one location (an empty list: no weekly hours there)."""
    errors = hours_errors(blocks)
    if len(blocks) > MAX_BLOCKS:
        errors["rules"] = Text("At most {count} blocks.", count=MAX_BLOCKS)
    now = rt.clock.now()
    async with _doctor_change(rt, doctor_id, errors) as session:
        if await session.get(Location, location_id) is None:
            raise NotFound(N_("Location not found."))
        await lock_schedules(session, [doctor_id])
        before, _ = await _schedule(session, doctor_id)
        after = Schedule({**before.hours, (doctor_id, location_id): list(blocks)}, before.exceptions)
        conflicts = await _conflicts(session, doctor_id, now, before=before, after=after)
        if conflicts and not confirm:
            return HoursChange(applied=False, conflicts=conflicts)
        await session.execute(
            delete(WorkHours).where(WorkHours.doctor_id == doctor_id, WorkHours.location_id == location_id)
        )
        for h in blocks:
            session.add(
                WorkHours(
                    doctor_id=doctor_id, location_id=location_id, weekday=h.weekday, start_time=h.opens,
                    end_time=h.closes,
                )
            )  # fmt: skip
        old = before.hours.get((doctor_id, location_id), [])
        record_change(
            session, actor, at=now, action="admin.work-hours-set", entity="doctor", entity_id=doctor_id,
            before={"location_id": location_id, "rules": [hours_json(h) for h in old]},
            after={"location_id": location_id, "rules": [hours_json(h) for h in blocks],
                   "conflicts": [c.appointment_id for c in conflicts]},
        )  # fmt: skip
    await clinic_changed(rt)
    return HoursChange(applied=True, conflicts=conflicts)


async def add_exception(
    rt: Runtime, actor: Actor, doctor_id: int, exception: HoursException, *, note: str, confirm: bool
) -> HoursChange:
    """Add a dated exception to the doctor's hours. Its times are wall-clock times at the locations it applies to:
    one the clocks jump over that day is refused, one they pass twice is its first occurrence (``times`` in the
    answer gives each with its offset)."""
    errors = exception_errors(exception)
    if len(note) > 255:
        errors["note"] = N_("At most 255 characters.")
    now = rt.clock.now()
    async with _doctor_change(rt, doctor_id, errors) as session:
        if exception.location_id is not None and await session.get(Location, exception.location_id) is None:
            raise ValidationFailed(fields={"location_id": N_("Unknown location.")})
        zones: dict[int, str] = {
            row[0]: row[1] for row in await session.execute(select(Location.id, Location.timezone))
        }
        if gaps := time_errors(exception, zones):
            raise ValidationFailed(fields=gaps)
        times = tuple(exception_times(exception, zones))
        await lock_schedules(session, [doctor_id])
        before, _ = await _schedule(session, doctor_id)
        after = Schedule(before.hours, {doctor_id: [*before.exceptions.get(doctor_id, ()), exception]})
        conflicts = await _conflicts(session, doctor_id, now, before=before, after=after)
        if conflicts and not confirm:
            return HoursChange(applied=False, conflicts=conflicts, times=times)
        row = WorkHoursException(
            doctor_id=doctor_id, location_id=exception.location_id, day=exception.day, kind=exception.kind,
            start_time=exception.opens, end_time=exception.closes, note=note, created_at=now,
        )  # fmt: skip
        session.add(row)
        await session.flush()
        record_change(
            session, actor, at=now, action="admin.hours-exception-added", entity="doctor", entity_id=doctor_id,
            before=None, after={**exception_json(row), "conflicts": [c.appointment_id for c in conflicts]},
        )  # fmt: skip
        row_id = row.id
    await clinic_changed(rt)
    return HoursChange(applied=True, conflicts=conflicts, exception_id=row_id, times=times)


async def remove_exception(rt: Runtime, actor: Actor, exception_id: int, *, confirm: bool) -> HoursChange:
    """Withdraw an exception (kept, marked removed): e.g. an extra day that no longer happens."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.get(WorkHoursException, exception_id)
        if row is None or row.removed_at is not None:
            raise NotFound(N_("Exception not found."))
        doctor_id = row.doctor_id
        await lock_schedules(session, [doctor_id])
        before, rows = await _schedule(session, doctor_id)
        kept = [
            HoursException(r.day, r.kind, r.location_id, r.start_time, r.end_time) for r in rows if r.id != exception_id
        ]
        after = Schedule(before.hours, {doctor_id: kept})
        conflicts = await _conflicts(session, doctor_id, now, before=before, after=after)
        if conflicts and not confirm:
            return HoursChange(applied=False, conflicts=conflicts)
        row.removed_at = now
        record_change(
            session, actor, at=now, action="admin.hours-exception-removed", entity="doctor", entity_id=doctor_id,
            before=exception_json(row), after=None,
        )  # fmt: skip
    await clinic_changed(rt)
    return HoursChange(applied=True, conflicts=conflicts, exception_id=exception_id)
