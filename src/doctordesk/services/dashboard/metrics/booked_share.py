"""Booked share of offered hours, per doctor: the minutes of approved and completed appointments that start in the
window, against the minutes the doctor's weekly hours and exceptions offered on the window's days."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.dashboard.figures import Column, Figure, Row, share
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.dashboard.offered import offered_minutes
from doctordesk.domain.scheduling.suggestions import Hours
from doctordesk.domain.texts import N_
from doctordesk.store.tables import Appointment

BOOKED = (Status.APPROVED, Status.COMPLETED)


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    w = scope.window
    statement = (
        select(Appointment.doctor_id, func.sum(Appointment.duration_minutes))
        .where(
            Appointment.status.in_([int(s) for s in BOOKED]),
            Appointment.start_at >= w.start,
            Appointment.start_at < w.end,
        )
        .group_by(Appointment.doctor_id)
    )
    if scope.doctor_id is not None:
        statement = statement.where(Appointment.doctor_id == scope.doctor_id)
    booked = {int(d): int(m or 0) for d, m in (await session.execute(statement)).all()}
    hours: dict[int, dict[int, list[Hours]]] = defaultdict(dict)
    for (doctor, location), blocks in scope.work_hours.items():
        hours[doctor][location] = list(blocks)
    rows = []
    for doctor, name in scope.doctors.items():
        offered = offered_minutes(w.days, hours.get(doctor, {}), scope.exceptions.get(doctor, ()))
        minutes = booked.get(doctor, 0)
        rows.append(Row(name, (round(offered / 60, 1), round(minutes / 60, 1), share(minutes, offered))))
    return Figure(
        kind="text",
        columns=(
            Column("offered_hours", N_("Offered hours"), "hours"),
            Column("booked_hours", N_("Booked hours"), "hours"),
            Column("booked_share", N_("Booked share (%)"), "percent"),
        ),
        rows=tuple(rows),
    )


METRIC = Metric(
    key="booked-share",
    title=N_("Booked share of offered hours"),
    description=N_(
        "Per doctor, the hours of approved and completed appointments in the last 90 days as a share of the hours "
        "their weekly hours and exceptions offered. A doctor without hours has no share."
    ),
    chart="hbar",
    compute=compute,
    series=("booked_share",),
)
