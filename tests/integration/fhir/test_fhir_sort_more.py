"""``_sort`` on the audit trail (``date``) and the locations (``_id``, ``name``), and Location search by ``_id`` and
``name`` (docs/fhir.md#sorting): ascending and descending, ties broken by the id in the last key's direction,
pages that neither repeat nor skip a row, compared with a Python sort of the same rows; a key not offered is a
warning, or 400 when strict (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, text

from doctordesk.store.tables import AuditLog, Location
from tests.integration.fhir.test_fhir_sort import self_query, walk
from tests.support.fhir import assert_outcome, entries, resource_of
from tests.support.integration import make_key

TIED = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


@pytest.fixture
async def trail(runtime, demo):
    """Audit rows of one made-up action: three at the same instant (a tie), two apart."""
    async with runtime.db.transaction() as s:
        for at in (TIED, TIED, TIED, TIED - timedelta(hours=1), TIED + timedelta(days=2)):
            s.add(AuditLog(at=at, actor_id=None, action="sort.check", entity="appointment", entity_id=None))
    return "sort.check"


def recorded(event):
    return datetime.fromisoformat(event["recorded"])


@pytest.mark.parametrize("descending", [False, True])
async def test_audit_events_sort_by_date_either_way_with_ties_and_pages(client, login, trail, descending):
    admin = await login("admin")
    sort = "-date" if descending else "date"
    found, first = await walk(client, admin.headers, f"/fhir/AuditEvent?subtype={trail}&_sort={sort}&_count=2")
    assert len(found) == 5 and len({e["id"] for e in found}) == 5
    expected = sorted(found, key=lambda e: (recorded(e), int(e["id"])), reverse=descending)
    assert [e["id"] for e in found] == [e["id"] for e in expected]
    assert self_query(first)["_sort"] == [sort]


async def test_audit_events_are_newest_first_without_a_sort(client, login, trail):
    admin = await login("admin")
    found, first = await walk(client, admin.headers, f"/fhir/AuditEvent?subtype={trail}&_count=2")
    assert [recorded(e) for e in found] == sorted((recorded(e) for e in found), reverse=True)
    assert "_sort" not in self_query(first)


async def test_an_audit_sort_not_offered_is_a_warning_or_refused_when_strict(client, login, trail):
    admin = await login("admin")
    lenient = resource_of(await client.get(f"/fhir/AuditEvent?subtype={trail}&_sort=subtype", headers=admin.headers))
    assert entries(lenient, "outcome")[0]["issue"][0]["expression"] == ["_sort"]
    assert len(entries(lenient)) == 5
    strict = {**admin.headers, "Prefer": "handling=strict"}
    response = await client.get(f"/fhir/AuditEvent?subtype={trail}&_sort=subtype", headers=strict)
    assert_outcome(response, 400, "NOT_SUPPORTED", expression="AuditEvent._sort")


@pytest.mark.parametrize("sort", ["date", "-date"])
async def test_a_sorted_audit_search_reads_the_trail_by_its_index_of_date(client, login, runtime, demo, sort):
    rows = [
        {"at": TIED - timedelta(minutes=i), "actor_id": None, "action": "bulk", "entity": "user", "entity_id": i,
         "details": {}}
        for i in range(3000)
    ]  # fmt: skip
    async with runtime.db.transaction() as session:
        await session.execute(insert(AuditLog), rows)
        await session.execute(text("ANALYZE"))
    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if "audit_log" in statement and "ORDER BY" in statement:
            statements.append((statement, parameters))

    engine = runtime.db.read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", capture)
    try:
        admin = await login("admin")
        page = resource_of(await client.get(f"/fhir/AuditEvent?_sort={sort}&_count=3", headers=admin.headers))
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    assert len(entries(page)) == 3 and statements
    explain = "EXPLAIN QUERY PLAN " if runtime.db.is_sqlite else "EXPLAIN "
    async with runtime.db.read() as session:
        connection = await session.connection()
        for statement, parameters in statements:
            plan = " | ".join(str(r[-1]) for r in await connection.exec_driver_sql(explain + statement, parameters))
            assert "ix_audit_log_at_id" in plan, plan
            assert "TEMP B-TREE" not in plan and " Sort " not in plan, plan  # read in order, not sorted after


@pytest.fixture
async def places(runtime, demo):
    """Locations whose names tie ignoring case, beside the demo's."""
    async with runtime.db.transaction() as s:
        for name in ("Aachen Nord", "aachen nord", "Zell am See", "Ärztehaus Mitte"):
            s.add(Location(name=name, timezone="Europe/Berlin"))


@pytest.mark.parametrize(
    ("sort", "key_of", "reverse"),
    [
        ("name", lambda r: (r["name"].casefold(), int(r["id"])), False),
        ("-name", lambda r: (r["name"].casefold(), int(r["id"])), True),
        ("-_id", lambda r: (int(r["id"]),), True),
        ("name,-_id", lambda r: (r["name"].casefold(), -int(r["id"])), False),
    ],
)
async def test_locations_sort_by_name_and_id_with_ties_and_pages(client, key, places, sort, key_of, reverse):
    everything, _ = await walk(client, key.headers, "/fhir/Location?_count=200")
    found, first = await walk(client, key.headers, f"/fhir/Location?_sort={sort}&_count=2")
    assert len(found) == len(everything) >= 6 and len({r["id"] for r in found}) == len(found)
    assert [r["id"] for r in found] == [r["id"] for r in sorted(everything, key=key_of, reverse=reverse)]
    assert self_query(first)["_sort"] == [sort]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("name=aachen", {"Aachen Nord", "aachen nord"}),
        ("name=arzte", {"Ärztehaus Mitte"}),
        ("name:exact=Aachen Nord", {"Aachen Nord"}),
        ("name=zell,nord", {"Aachen Nord", "aachen nord", "Zell am See"}),
        ("name=aachen&name=zell", set()),
    ],
)
async def test_locations_are_found_by_name(client, key, places, query, names):
    found = entries(resource_of(await client.get(f"/fhir/Location?{query}", headers=key.headers)))
    assert {r["name"] for r in found} == names


async def test_a_location_is_found_by_id(client, key, demo):
    berlin, munich = demo.locations["berlin"], demo.locations["munich"]
    found = entries(resource_of(await client.get(f"/fhir/Location?_id={berlin},{munich}", headers=key.headers)))
    assert {r["id"] for r in found} == {str(berlin), str(munich)}
