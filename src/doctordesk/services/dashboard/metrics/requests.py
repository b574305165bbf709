"""Requests per day: appointments asked for (their ``created_at``) on each local day of the window."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.dashboard.figures import Column, Figure, Row
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.texts import N_
from doctordesk.services.dashboard.sql import span_index
from doctordesk.store.tables import Appointment


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    edges = scope.window.day_edges
    day = span_index(Appointment.created_at, edges).label("day")
    statement = (
        select(day, func.count())
        .where(Appointment.created_at >= edges[0], Appointment.created_at < edges[-1])
        .group_by(day)
    )
    if scope.doctor_id is not None:
        statement = statement.where(Appointment.doctor_id == scope.doctor_id)
    counts = {int(i): int(n) for i, n in (await session.execute(statement)).all()}
    return Figure(
        kind="day",
        columns=(Column("requests", N_("Requests"), "count"),),
        rows=tuple(Row(d, (counts.get(i, 0),)) for i, d in enumerate(scope.window.days)),
    )


METRIC = Metric(
    key="requests",
    title=N_("Requests per day"),
    description=N_("How many appointments were requested on each day of the last 90 days, in the clinic's time zone."),
    chart="bar",
    compute=compute,
)
