"""Free times through the integration API (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from tests.support.integration import FREE_START, make_key, request_body

URL = "/integration/v1/free-times"


@pytest.fixture
async def key(client, login):
    admin = await login("admin")
    return await make_key(client, admin.headers, scopes=["appointments:read"])


def params(demo, **extra):
    return {"doctor": demo.users["doctor1"], "location": demo.locations["berlin"], **extra}


async def test_free_times_follow_hours_lead_time_and_approved_appointments(client, key, demo):
    response = await client.get(
        URL, headers=key.headers, params=params(demo, **{"from": "2026-11-23", "to": "2026-11-24"})
    )
    assert response.status_code == 200, response.text
    body = response.json()
    starts = [f["start"] for f in body["free"]]
    assert body["timezone"] == "Europe/Berlin"
    # Now is 08:00 in Berlin: the first free start is 10:00 (2 hours ahead); the last ends at 17:00.
    assert starts[0] == "2026-11-23T10:00:00+01:00" and "2026-11-23T16:30:00+01:00" in starts
    assert "2026-11-23T17:00:00+01:00" not in starts
    # The demo's approved appointment on Tuesday 16:00-16:30 is taken.
    assert "2026-11-24T16:00:00+01:00" not in starts and "2026-11-24T15:30:00+01:00" in starts


async def test_a_free_time_can_be_requested_and_then_is_taken_only_once_approved(client, login, demo):
    admin = await login("admin")
    writer = await make_key(client, admin.headers, name="writer")
    day = {"from": "2026-11-26", "to": "2026-11-26"}
    before = (await client.get(URL, headers=writer.headers, params=params(demo, **day))).json()["free"]
    assert FREE_START in [f["start"] for f in before]
    created = await client.post("/integration/v1/appointment-requests", headers=writer.headers, json=request_body(demo))
    assert created.status_code == 201
    after = (await client.get(URL, headers=writer.headers, params=params(demo, **day))).json()["free"]
    assert after == before  # a request does not take the time: the doctor has not approved it


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"from": "2026-11-30", "to": "2026-11-23"}, "to"),
        ({"from": "2026-11-01", "to": "2026-12-31"}, "to"),
        ({"from": "2026-13-01", "to": "2026-11-23"}, "from"),
        ({"from": "9999-12-31", "to": "9999-12-31"}, "from"),
        ({"from": "2026-11-23", "to": "2026-11-23", "doctor": 999999}, "doctor"),
        ({"from": "2026-11-23", "to": "2026-11-23", "duration": 2}, "duration"),
        ({"from": "2026-11-23"}, "to"),
    ],
)
async def test_bad_free_time_queries_are_refused_naming_the_field(client, key, demo, extra, field):
    response = await client.get(URL, headers=key.headers, params=params(demo, **extra))
    assert response.status_code == 422 and field in response.json()["fields"], response.text
