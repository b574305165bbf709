"""Time from request to decision, per week: for each request decided in the week (approved, declined or
alternatives offered: the first such step of its history), the hours from the request to that decision; the week's
median and 90th percentile (nearest rank)."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.dashboard.figures import Column, Figure, Row, percentile
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.dashboard.window import bucket
from doctordesk.domain.texts import N_
from doctordesk.store.tables import Appointment, AppointmentHistory

DECISIONS = (Status.APPROVED, Status.DECLINED, Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK)


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    edges = scope.window.week_edges
    decided = func.min(AppointmentHistory.at).label("decided")
    statement = (
        select(Appointment.created_at, decided)
        .join(Appointment, Appointment.id == AppointmentHistory.appointment_id)
        .where(
            AppointmentHistory.from_status == Status.REQUESTED,
            AppointmentHistory.to_status.in_([int(s) for s in DECISIONS]),
            AppointmentHistory.at >= edges[0],
            AppointmentHistory.at < edges[-1],
        )
        .group_by(Appointment.id, Appointment.created_at)
    )
    if scope.doctor_id is not None:
        statement = statement.where(Appointment.doctor_id == scope.doctor_id)
    # Percentiles are no portable SQL aggregate: the database hands over two instants per decision (an index range
    # on the history's time), the weeks are cut here.
    hours: dict[int, list[float]] = defaultdict(list)
    for created, at in (await session.execute(statement)).all():
        week = bucket(at, edges)
        if week is not None:
            hours[week].append(max(0.0, (at - created).total_seconds() / 3600))
    rows = []
    for i, monday in enumerate(scope.window.weeks):
        taken = hours.get(i, [])
        median, p90 = percentile(taken, 50), percentile(taken, 90)
        rows.append(Row(monday, (len(taken), _round(median), _round(p90))))
    return Figure(
        kind="week",
        columns=(
            Column("decisions", N_("Decisions"), "count"),
            Column("median_hours", N_("Median (hours)"), "hours"),
            Column("p90_hours", N_("90th percentile (hours)"), "hours"),
        ),
        rows=tuple(rows),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


METRIC = Metric(
    key="decision-time",
    title=N_("Time from request to decision"),
    description=N_(
        "Per week (Monday to Sunday), the median and the 90th percentile of the hours from a request to the doctor's "
        "decision (approved, declined or other times offered), counted in the week of the decision."
    ),
    chart="line",
    compute=compute,
    series=("median_hours", "p90_hours"),
)
