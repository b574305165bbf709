"""No-shows and late cancellations, per week: of the booked appointments whose start has come in the week
(approved, completed, marked as a no-show, or canceled after being approved), the share marked as a no-show and
the share the patient canceled late — less than ``DOCTORDESK_PATIENT_CANCEL_HOURS`` before the start, or after it
(docs/dashboard.md#late-cancellation)."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.decisions import patient_cancel_deadline
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.dashboard.figures import Column, Figure, Row, share
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.dashboard.window import bucket
from doctordesk.domain.texts import N_
from doctordesk.services.dashboard.sql import span_index
from doctordesk.store.tables import Appointment, AppointmentHistory

KEPT = (Status.APPROVED, Status.COMPLETED, Status.NO_SHOW)


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    edges = [*scope.window.week_edges[:-1], min(scope.window.week_edges[-1], scope.window.now)]
    week = span_index(Appointment.start_at, edges).label("week")
    due = and_(Appointment.start_at >= edges[0], Appointment.start_at < edges[-1])
    mine = Appointment.doctor_id == scope.doctor_id if scope.doctor_id is not None else None
    kept = select(week, Appointment.status, func.count()).where(
        due, Appointment.status.in_([int(s) for s in KEPT])
    ).group_by(week, Appointment.status)  # fmt: skip
    canceled = select(Appointment.start_at, AppointmentHistory.at, AppointmentHistory.details).join(
        AppointmentHistory, AppointmentHistory.appointment_id == Appointment.id
    ).where(
        due,
        Appointment.status == Status.CANCELED,
        AppointmentHistory.to_status == Status.CANCELED,
        AppointmentHistory.from_status == Status.APPROVED,
    )  # fmt: skip
    if mine is not None:
        kept, canceled = kept.where(mine), canceled.where(mine)
    base: Counter[int] = Counter()
    no_shows: Counter[int] = Counter()
    for i, status, n in (await session.execute(kept)).all():
        base[int(i)] += int(n)
        if status == Status.NO_SHOW:
            no_shows[int(i)] += int(n)
    late: Counter[int] = Counter()
    # Cancellations of booked appointments are few: their instants and who canceled are read and judged here.
    for start, at, details in (await session.execute(canceled)).all():
        i = bucket(start, edges)
        if i is None:
            continue
        base[i] += 1
        # Late: at or after the clinic's deadline, where the app itself no longer lets the patient cancel.
        if (details or {}).get("by") == "patient" and at >= patient_cancel_deadline(start, hours=scope.cancel_hours):
            late[i] += 1
    rows = tuple(
        Row(monday, (base[i], no_shows[i], share(no_shows[i], base[i]), late[i], share(late[i], base[i])))
        for i, monday in enumerate(scope.window.weeks)
    )
    return Figure(
        kind="week",
        columns=(
            Column("booked", N_("Booked appointments due"), "count"),
            Column("no_shows", N_("No-shows"), "count"),
            Column("no_show_rate", N_("No-show rate (%)"), "percent"),
            Column("late_cancellations", N_("Late cancellations"), "count"),
            Column("late_cancellation_rate", N_("Late cancellation rate (%)"), "percent"),
        ),
        rows=rows,
    )


METRIC = Metric(
    key="attendance",
    title=N_("No-shows and late cancellations"),
    description=N_(
        "Per week, of the booked appointments whose time has come, the share marked as a no-show and the share the "
        "patient canceled late (after the clinic's cancellation deadline before the start)."
    ),
    chart="line",
    compute=compute,
    series=("no_show_rate", "late_cancellation_rate"),
)
