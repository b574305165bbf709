"""vread and instance history of Appointments (docs/fhir.md#versions): the Location a create answers reads again,
every version reads as it was, the history lists them newest first, with the read's rights (SQLite and
PostgreSQL)."""

from __future__ import annotations

from tests.integration.fhir.test_fhir_create import post, request
from tests.support.fhir import assert_outcome, resource_of
from tests.support.integration import make_key


async def test_the_created_location_reads_and_every_version_reads_as_it_was(client, login, demo):
    key = await make_key(client, (await login("admin")).headers)
    created = await post(client, key.headers, request(demo))
    first = resource_of(created, 201)
    location = created.headers["location"].removeprefix("http://testserver")
    assert location == f"/fhir/Appointment/{first['id']}/_history/1"
    again = await client.get(location, headers=key.headers)
    assert resource_of(again) == first and again.headers["etag"] == 'W/"1"'
    canceled = await client.post(
        f"/integration/v1/appointments/{first['id']}/cancel",
        headers=key.headers,
        json={"by": "patient", "reason": "Feeling better", "version": 1},
    )
    assert canceled.status_code == 200, canceled.text
    now = resource_of(await client.get(f"/fhir/Appointment/{first['id']}", headers=key.headers))
    assert now["status"] == "cancelled" and now["meta"]["versionId"] == "2"
    assert resource_of(await client.get(location, headers=key.headers)) == first
    assert resource_of(await client.get(f"/fhir/Appointment/{first['id']}/_history/2", headers=key.headers)) == now
    history = resource_of(await client.get(f"/fhir/Appointment/{first['id']}/_history", headers=key.headers))
    assert history["type"] == "history" and history["total"] == 2
    assert [e["resource"] for e in history["entry"]] == [now, first]
    assert [e["response"]["etag"] for e in history["entry"]] == ['W/"2"', 'W/"1"']
    missing = await client.get(f"/fhir/Appointment/{first['id']}/_history/3", headers=key.headers)
    assert_outcome(missing, 404, "NOT_FOUND")


async def test_versions_of_an_appointment_the_caller_may_not_see_are_404(client, login, demo):
    key = await make_key(client, (await login("admin")).headers)
    first = resource_of(await post(client, key.headers, request(demo)), 201)
    other = await login("doctor2")
    for path in ("/_history/1", "/_history"):
        response = await client.get(f"/fhir/Appointment/{first['id']}{path}", headers=other.headers)
        assert_outcome(response, 404, "NOT_FOUND")
    refused = await client.get(f"/fhir/Appointment/{first['id']}/_history?_since=2026", headers=key.headers)
    assert_outcome(refused, 400, "NOT_SUPPORTED")
