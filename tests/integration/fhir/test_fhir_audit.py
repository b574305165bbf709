"""The audit trail as AuditEvent: admins only, the admin API's rows and order, filters and keyset pages (SQLite
and PostgreSQL)."""

from __future__ import annotations

import pytest

from tests.integration.fhir.test_fhir_create import post, request
from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def test_a_request_made_through_fhir_is_in_the_audit_trail_as_an_audit_event(client, key, login, demo):
    admin = await login("admin")
    created = resource_of(await post(client, key.headers, request(demo)), 201)
    url = f"/fhir/AuditEvent?entity=Appointment/{created['id']}&subtype=appointment.request"
    (found,) = entries(resource_of(await client.get(url, headers=admin.headers)))
    assert found["entity"][0]["what"]["reference"] == f"Appointment/{created['id']}"
    assert found["subtype"][0]["code"] == "appointment.request"
    again = resource_of(await client.get(f"/fhir/AuditEvent/{found['id']}", headers=admin.headers))
    assert again == found


async def test_audit_events_page_newest_first_like_the_admin_api(client, key, login, demo):
    admin = await login("admin")
    for start in ("2026-11-26T11:00:00+01:00", "2026-11-26T12:00:00+01:00", "2026-11-26T13:00:00+01:00"):
        resource_of(await post(client, key.headers, request(demo, start=start)), 201)
    admin_api = await client.get("/admin/audit?limit=500", headers=admin.headers)
    assert admin_api.status_code == 200, admin_api.text
    url: str | None = "/fhir/AuditEvent?_count=2"
    seen: list[str] = []
    while url:
        page = resource_of(await client.get(url.removeprefix("http://testserver"), headers=admin.headers))
        seen.extend(e["id"] for e in entries(page))
        url = next_link(page)
    rows = admin_api.json()["rows"]
    assert seen == [str(r["id"]) for r in rows]


async def test_only_admins_read_the_audit_trail(client, key, login, demo):
    for headers in (key.headers, (await login("doctor1")).headers, (await login("patient1")).headers):
        assert_outcome(await client.get("/fhir/AuditEvent", headers=headers), 403, "FORBIDDEN")
        assert_outcome(await client.get("/fhir/AuditEvent/1", headers=headers), 403, "FORBIDDEN")
