"""Reminders confirmed, per week of the appointments' starts: the appointments that were sent a reminder for a
start in the week (up to now), how many of them the patient confirmed for that start ("I will come"), and the
share (docs/dashboard.md#reminders-confirmed). A moved appointment counts for the start it was reminded of."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import and_, distinct, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.dashboard.figures import Column, Figure, Row, share
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.texts import N_
from doctordesk.services.dashboard.sql import span_index
from doctordesk.store.mail_tables import AppointmentConfirmation, ReminderSent
from doctordesk.store.tables import Appointment


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    edges = [*scope.window.week_edges[:-1], min(scope.window.week_edges[-1], scope.window.now)]
    counts: list[Counter[int]] = []
    for table in (ReminderSent, AppointmentConfirmation):
        week = span_index(table.start_at, edges).label("week")
        query = (
            select(week, func.count(distinct(table.appointment_id)))
            .where(and_(table.start_at >= edges[0], table.start_at < edges[-1]))
            .group_by(week)
        )
        if scope.doctor_id is not None:
            query = query.join(Appointment, Appointment.id == table.appointment_id).where(
                Appointment.doctor_id == scope.doctor_id
            )
        counts.append(Counter({int(i): int(n) for i, n in (await session.execute(query)).all()}))
    reminded, confirmed = counts
    rows = tuple(
        Row(monday, (reminded[i], confirmed[i], share(confirmed[i], reminded[i])))
        for i, monday in enumerate(scope.window.weeks)
    )
    return Figure(
        kind="week",
        columns=(
            Column("reminded", N_("Appointments reminded"), "count"),
            Column("confirmed", N_("Confirmed by the patient"), "count"),
            Column("confirmed_rate", N_("Confirmed (%)"), "percent"),
        ),
        rows=rows,
    )


METRIC = Metric(
    key="reminders",
    title=N_("Reminders confirmed"),
    description=N_(
        "Per week of the appointments' times, the appointments whose patient was sent a reminder, and the share "
        "the patient confirmed with the reminder's link."
    ),
    chart="bar",
    compute=compute,
    series=("confirmed_rate",),
)
