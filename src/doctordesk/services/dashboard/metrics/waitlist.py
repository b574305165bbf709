"""Freed times refilled from the waitlist, per week of their freeing: the times the waitlist found free and offered
(``waitlist_times``), how many a waiting patient took, the share, and how fast — the median hours from the time
found to the winning patient's acceptance (docs/dashboard.md#waitlist-refills)."""

from __future__ import annotations

from collections import Counter, defaultdict

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.dashboard.figures import Column, Figure, Row, percentile, share
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.dashboard.window import bucket
from doctordesk.domain.texts import N_
from doctordesk.store.waitlist.tables import WaitlistOffer, WaitlistTime


async def compute(session: AsyncSession, scope: Scope) -> Figure:
    edges = scope.window.week_edges
    statement = (
        select(WaitlistTime.found_at, WaitlistOffer.answered_at)
        .outerjoin(WaitlistOffer, WaitlistOffer.id == WaitlistTime.taken_offer_id)
        .where(WaitlistTime.found_at >= edges[0], WaitlistTime.found_at < edges[-1])
    )
    if scope.doctor_id is not None:
        statement = statement.where(WaitlistTime.doctor_id == scope.doctor_id)
    # Freed times are few (a clinic's cancellations): their instants are read and cut into weeks here.
    freed: Counter[int] = Counter()
    hours: dict[int, list[float]] = defaultdict(list)
    for found, taken in (await session.execute(statement)).all():
        week = bucket(found, edges)
        if week is None:
            continue
        freed[week] += 1
        if taken is not None:
            hours[week].append(max(0.0, (taken - found).total_seconds() / 3600))
    rows = []
    for i, monday in enumerate(scope.window.weeks):
        refilled = len(hours.get(i, []))
        median = percentile(hours.get(i, []), 50)
        rows.append(
            Row(monday, (freed[i], refilled, share(refilled, freed[i]), None if median is None else round(median, 1)))
        )
    return Figure(
        kind="week",
        columns=(
            Column("freed", N_("Freed times offered"), "count"),
            Column("refilled", N_("Taken from the waitlist"), "count"),
            Column("refilled_rate", N_("Refilled (%)"), "percent"),
            Column("median_hours", N_("Median time to refill (hours)"), "hours"),
        ),
        rows=tuple(rows),
    )


METRIC = Metric(
    key="waitlist",
    title=N_("Freed times refilled from the waitlist"),
    description=N_(
        "Per week, the freed times the waitlist offered to waiting patients, the share a patient took, and the "
        "median hours from the time being freed to a patient accepting it."
    ),
    chart="bar",
    compute=compute,
    series=("refilled_rate",),
)
