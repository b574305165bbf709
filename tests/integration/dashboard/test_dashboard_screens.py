"""The dashboard screens over HTTP (docs/dashboard.md), on SQLite and PostgreSQL: who may see which figures, the
charts with their tables and CSV downloads, the CSV guarded against formulas, and the page catching up after a
change."""

from __future__ import annotations

import base64
import csv
import io
from datetime import timedelta
from typing import Any

from sqlalchemy import update

from doctordesk.screens.protocol import walk
from doctordesk.store.tables import User

ADMIN = "/profile/admin/dashboard"
OWN = "/profile/dashboard"
KEYS = ["requests", "decision-time", "booked-share", "attendance"]


def by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(page["elements"])}


async def test_an_admin_sees_every_metric_as_a_chart_with_its_table_and_csv(client, login):
    admin = await login("admin")
    r = await client.put(ADMIN, headers=admin.headers)
    assert r.status_code == 200, r.text
    elements = by_id(r.json())
    for key in KEYS:
        chart = elements[f"chart-{key}"]
        assert chart["type"] == "Chart" and chart["label"]
        svg = base64.b64decode(chart["value"].removeprefix("data:image/svg+xml;base64,")).decode()
        assert "<title id=\"chart-title\">" in svg and "<desc id=\"chart-desc\">" in svg and "<script" not in svg
        assert chart["props"]["description"] and chart["props"]["columns"] and chart["props"]["rows"] is not None
        assert elements[f"csv-{key}"]["props"]["href"] == f"{ADMIN}/export/{key}"
    assert len(elements["chart-requests"]["props"]["rows"]) == 90
