"""Every date, date and time and wall-clock time any door takes is read by the one reader (domain/moments.py,
docs/protocol.md#input-rules), on SQLite and PostgreSQL: each field and parameter /openapi.json describes as a
date, a date-time or a time (its ``format``, or the patterns moments states) and each date search parameter the
FHIR CapabilityStatement lists has a case here, and each refuses the same bad spellings (a space for ``T``,
lowercase ``t``/``z``, offset minutes of 60 or more, an offset without its colon, seconds since 1970, 24:00, a
leap second, a fraction of twenty digits, a date and time where a day is expected, a day where an instant is),
in the documented error shape, writing nothing, and accepts the good one."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import func, select

from doctordesk.runtime import Runtime
from doctordesk.store.schema import metadata
from tests.integration.web.date_doors import BAD, DOORS, FHIR_DOORS, Ctx, Door, described_dates, everything
from tests.support.integration import BOTH, make_key
from tests.support.openapi import description


def test_every_date_and_time_the_api_description_states_has_its_door_here():
    assert described_dates(description()) == set(DOORS)


async def test_every_fhir_date_search_parameter_has_its_door_here(client, login):
    admin = await login("admin")
    statement = (await client.get("/fhir/metadata", headers=admin.headers)).json()
    listed = {
        (r["type"], p["name"])
        for rest in statement["rest"]
        for r in rest["resource"]
        for p in r.get("searchParam", [])
        if p["type"] == "date"
    }
    assert listed == {k for k in FHIR_DOORS if "/" not in k[0] and "(" not in k[0]}


async def test_the_rows_read_for_a_refusal_are_every_row_of_every_table_and_show_any_change(runtime, demo):
    before = await everything(runtime)
    async with runtime.db.read() as session:
        for table in metadata.sorted_tables:
            count = (await session.execute(select(func.count()).select_from(table))).scalar_one()
            assert len(before[table.name]) == count, table.name
    users = metadata.tables["users"]
    async with runtime.db.transaction() as session:
        changed = users.update().where(users.c.id == demo.users["doctor1"]).values(display_name="Dr. Changed")
        await session.execute(changed)
    after = await everything(runtime)
    assert after["users"] != before["users"]
    assert {k: v for k, v in after.items() if k != "users"} == {k: v for k, v in before.items() if k != "users"}


@pytest.fixture
async def ctx(client, login, demo) -> Ctx:
    admin, doctor, patient = await login("admin"), await login("doctor1"), await login("patient1")
    key = await make_key(client, admin.headers, scopes=[*BOTH, "subscriptions:write"])
    hook = await client.post(
        "/admin/webhooks",
        json={"url": "https://hooks.example.com/a", "event_types": ["appointment.approved"]},
        headers=admin.headers,
    )
    assert hook.status_code == 201, hook.text
    policies = await client.get(f"/admin/patients/{demo.patients['patient1']}/policies", headers=admin.headers)
    policy = policies.json()["policies"][0]["id"]
    # The key's first use is recorded (its last use, at the tests' fixed clock): before the refusals, not by them.
    assert (await client.get("/fhir/Practitioner", headers=key.headers)).status_code == 200
    return Ctx(client, demo, admin.headers, doctor.headers, patient.headers, key.headers, hook.json()["id"], policy)


def _refused(response: httpx.Response, door: Door) -> None:
    assert response.status_code < 500, response.text
    if response.url.path.startswith("/fhir/"):
        assert response.status_code == 400, response.text
        assert response.headers["content-type"].startswith("application/fhir+json")
        body = response.json()
        assert body["resourceType"] == "OperationOutcome", body
        assert any(door.field in " ".join(i.get("expression", [])) for i in body["issue"]), body
        return
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["kind"] == "error" and body["code"] == "FIELDS_VALIDATION_ERROR" and body["status"] == 422, body
    assert any(name == door.field or name.startswith(f"{door.field}.") for name in body["fields"]), body


async def _holds(c: Ctx, runtime: Runtime, door: Door) -> None:
    before = await everything(runtime)
    for why, value in BAD[door.kind].items():
        _refused(await door.send(c, value), door)
        assert await everything(runtime) == before, why
    accepted = await door.send(c, door.good)
    assert accepted.status_code < 300, accepted.text


def _name(key: tuple[str, ...]) -> str:
    return " ".join(key)


@pytest.mark.parametrize("key", sorted(DOORS), ids=_name)
async def test_each_date_and_time_of_the_api_refuses_every_bad_spelling_and_takes_the_good_one(ctx, runtime, key):
    await _holds(ctx, runtime, DOORS[key])


@pytest.mark.parametrize("key", sorted(FHIR_DOORS), ids=_name)
async def test_each_fhir_date_refuses_every_bad_spelling_with_an_operation_outcome_and_takes_the_good_one(
    ctx, runtime, key
):
    await _holds(ctx, runtime, FHIR_DOORS[key])
