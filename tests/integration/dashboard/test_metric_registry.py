"""A metric is one module and one registry entry (docs/dashboard.md#adding-a-metric): a metric the screen code has
never heard of appears as a chart with its table and CSV once it is in ``registry.METRICS``, for the admin and for
a doctor, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io

import pytest

from doctordesk.domain.dashboard.figures import Column, Figure, Row
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.screens.protocol import walk
from doctordesk.services.dashboard import registry


async def confirmed_reminders(_session: object, scope: Scope) -> Figure:
    """A stand-in for a metric built elsewhere: one value per week, the doctor's id in it to show the scope."""
    return Figure(
        kind="week",
        columns=(Column("confirmed", "Requests", "count"),),
        rows=tuple(Row(monday, (scope.doctor_id or 0,)) for monday in scope.window.weeks),
    )


@pytest.fixture
def with_new_metric(monkeypatch: pytest.MonkeyPatch) -> Metric:
    metric = Metric(key="reminders-confirmed", title="Requests per day", description="Requests", chart="line",
                    compute=confirmed_reminders)  # fmt: skip
    monkeypatch.setattr(registry, "METRICS", (*registry.METRICS, metric))
    return metric


async def test_a_metric_added_to_the_registry_is_shown_and_exported_without_screen_code(client, login, with_new_metric):
    doctor = await login("doctor1")
    page = (await client.put("/profile/dashboard", headers=doctor.headers)).json()
    elements = {e["id"]: e for e in walk(page["elements"])}
    chart = elements["chart-reminders-confirmed"]
    assert chart["type"] == "Chart" and chart["value"].startswith("data:image/svg+xml;base64,")
    assert chart["props"]["rows"][-1][1] == str(doctor.user["id"])
    assert elements["csv-reminders-confirmed"]["props"]["href"] == "/profile/dashboard/export/reminders-confirmed"
    exported = await client.get("/profile/dashboard/export/reminders-confirmed", headers=doctor.headers)
    assert exported.status_code == 200, exported.text
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert rows[0] == ["Week", "Requests"] and rows[-1] == ["2026-11-23", str(doctor.user["id"])]
