"""The dashboard's metrics, in the order the screen shows them. A metric is one module under ``metrics/`` that
defines a ``Metric`` (its key, texts, chart and the query that computes its ``Figure``) and one entry here: the
screen, the CSV export and the routes read this tuple and nothing else (docs/dashboard.md#adding-a-metric)."""

from __future__ import annotations

from doctordesk.domain.dashboard.metric import Metric
from doctordesk.services.dashboard.metrics import attendance, booked_share, decision_time, reminders, requests, waitlist

METRICS: tuple[Metric, ...] = (
    requests.METRIC,
    decision_time.METRIC,
    booked_share.METRIC,
    attendance.METRIC,
    reminders.METRIC,
    waitlist.METRIC,
)
