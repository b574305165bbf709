"""The clinic's booking horizon (DOCTORDESK_BOOKING_HORIZON_DAYS, docs/booking.md#horizon): every entry point that
asks for or proposes a time refuses one beyond it with its interface's validation error and writes nothing, and free
times end where the horizon does (SQLite and PostgreSQL).

Against the tests' clock (Monday 23 Nov 2026 08:00 in Berlin) a horizon of 10 days ends on Thursday 3 Dec 08:00 in
Berlin: Wednesday 2 Dec 11:00 is inside, Thursday 3 Dec 11:00 beyond (both in Dr. Berger's Berlin hours)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from doctordesk.config import Settings
from doctordesk.domain.scheduling.suggestions import horizon_message
from doctordesk.screens.protocol import walk
from tests.integration.web.strict_support import row_counts
from tests.support.appointments import fhir_request
from tests.support.fhir import FHIR_JSON, assert_outcome, resource_of
from tests.support.integration import make_key, request_body
from tests.support.review import REQUESTED, aid, approve_url, card, snapshot

HORIZON_DAYS = 10
INSIDE = "2026-12-02T11:00:00+01:00"
BEYOND = "2026-12-03T11:00:00+01:00"
MESSAGE = horizon_message(timedelta(days=HORIZON_DAYS))
REQUESTS = "/integration/v1/appointment-requests"


@pytest.fixture
def settings(database_url: str, settings_factory: Any) -> Settings:
    made: Settings = settings_factory(database_url, booking_horizon_days=HORIZON_DAYS)
    return made


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def _refused(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and body["fields"][field] == MESSAGE, body


async def test_the_integration_api_refuses_a_request_beyond_the_horizon(client, key, demo, runtime):
    before = await row_counts(runtime)
    _refused(await client.post(REQUESTS, headers=key.headers, json=request_body(demo, start=BEYOND)), "start")
    _refused(
        await client.post(REQUESTS, headers=key.headers, json=request_body(demo, start="2040-01-05T10:00:00+01:00")),
        "start",
    )
    assert await row_counts(runtime) == before
    inside = await client.post(REQUESTS, headers=key.headers, json=request_body(demo, start=INSIDE))
    assert inside.status_code == 201, inside.text


def _fhir(demo: Any, start: str) -> str:
    return json.dumps(fhir_request(demo, start))


async def test_fhir_refuses_an_appointment_beyond_the_horizon(client, key, demo, runtime):
    headers = {**key.headers, "Content-Type": FHIR_JSON}
    before = await row_counts(runtime)
    refused = await client.post("/fhir/Appointment", content=_fhir(demo, BEYOND), headers=headers)
    assert_outcome(refused, 422, "FIELDS_VALIDATION_ERROR", expression="Appointment.start")
    assert MESSAGE in refused.text
    assert await row_counts(runtime) == before
    resource_of(await client.post("/fhir/Appointment", content=_fhir(demo, INSIDE), headers=headers), 201)


async def test_the_booking_screen_refuses_a_request_beyond_the_horizon(client, login, demo, runtime):
    patient = await login("patient1")
    form = {
        "doctor": str(demo.users["doctor1"]),
        "location": str(demo.locations["berlin"]),
        "service": "consultation",
        "start": "20261203T1000Z",  # 11:00 in Berlin
    }
    before = await row_counts(runtime)
    _refused(await client.post("/profile/book/request", headers=patient.headers, data=form), "start")
    assert await row_counts(runtime) == before
    inside = await client.post(
        "/profile/book/request", headers=patient.headers, data={**form, "start": "20261202T1000Z"}
    )
    assert inside.status_code == 200, inside.text


async def test_the_booking_screen_shows_no_week_beyond_the_horizon(client, login):
    patient = await login("patient1")
    page = await client.put("/profile/book", headers=patient.headers, params={"week": "2027-06-07"})
    assert page.status_code == 200, page.text
    # Settled to the week the horizon ends in (Thursday 3 December: the week of Monday 30 November).
    assert "week=2026-11-30" in page.json()["endpoint"]


async def test_a_doctor_with_nothing_free_up_to_the_horizon_is_said_so_once_and_next_week_is_off(
    client, login, key, demo
):
    """Dr. Berger is away every working day up to the horizon. The screen says so and what to do,
    instead of a Next week to click through to the horizon; ``$find`` without a range finds nothing."""
    admin = await login("admin")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    days = [f"2026-11-{d}" for d in (23, 24, 25, 26, 27, 30)] + [f"2026-12-0{d}" for d in (1, 2, 3)]
    for day in days:  # confirmed: the approved appointments those days hold stay
        holiday = {"day": day, "kind": "holiday", "note": "Away", "confirm": True}
        added = await client.post(f"/admin/doctors/{doctor}/hours-exceptions", headers=admin.headers, json=holiday)
        assert added.status_code == 200 and added.json()["applied"], added.text
    patient = await login("patient1")
    page = await client.put("/profile/book", headers=patient.headers, params={"doctor": doctor, "location": berlin})
    assert page.status_code == 200, page.text
    elements = {e["id"]: e for e in walk(page.json()["elements"])}
    assert elements["none-free"].get("visible", True)
    assert elements["none-free"]["value"] == (
        "Dr. Anna Berger has no free time at Berlin Mitte Clinic until 03 Dec 2026. Choose another doctor or "
        "location, or ask the clinic."
    )
    assert elements["next-week"].get("enabled") is False and elements["previous-week"].get("enabled") is False
    assert elements["times-empty"].get("visible") is False and elements["first-free"].get("visible") is False
    assert "week=" not in page.json()["endpoint"]  # this week, looked for again at every poll
    german = await client.put(
        "/profile/book", headers={**patient.headers, "Accept-Language": "de"}, params={"doctor": doctor}
    )
    notice = next(e for e in walk(german.json()["elements"]) if e["id"] == "none-free")
    assert notice["value"].startswith("Dr. Anna Berger hat bis 3. Dez. 2026 keine freien Termine in Berlin Mitte")
    found = resource_of(
        await client.get(
            f"/fhir/Appointment/$find?practitioner=Practitioner/{doctor}&location=Location/{berlin}",
            headers=key.headers,
        )
    )
    assert found["total"] == 0 and not found.get("entry")


async def test_review_and_approve_refuses_an_alternative_beyond_the_horizon(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    fields = {**card(1, d1, berlin, "2026-12-03", "11:00"), "version": "1"}
    _refused(await client.post(approve_url(a), headers=doctor.headers, data=fields), "date~1")
    assert await snapshot(runtime, a) == before
    inside = {**card(1, d1, berlin, "2026-12-02", "11:00"), "version": "1"}
    assert (await client.post(approve_url(a), headers=doctor.headers, data=inside)).status_code == 200


async def test_a_reschedule_request_beyond_the_horizon_is_refused(client, key, demo, runtime):
    a = aid(demo, REQUESTED)
    url = f"/integration/v1/appointments/{a}/reschedule-request"
    before = await snapshot(runtime, a)
    _refused(await client.post(url, headers=key.headers, json={"start": BEYOND}), "start")
    assert await snapshot(runtime, a) == before
    assert (await client.post(url, headers=key.headers, json={"start": INSIDE})).status_code == 200


async def test_free_times_end_at_the_horizon_and_agree_with_the_requests(client, key, demo):
    params = {"doctor": demo.users["doctor1"], "location": demo.locations["berlin"], "from": "2026-12-02"}
    free = await client.get("/integration/v1/free-times", headers=key.headers, params={**params, "to": "2026-12-06"})
    assert free.status_code == 200, free.text
    starts = [f["start"] for f in free.json()["free"]]
    # The horizon ends at 08:00 in Berlin on Thursday: that start is the last one offered.
    assert starts[-1] == "2026-12-03T08:00:00+01:00" and "2026-12-02T16:30:00+01:00" in starts
    last = await client.post(REQUESTS, headers=key.headers, json=request_body(demo, start=starts[-1]))
    assert last.status_code == 201, last.text
    _refused(
        await client.post(REQUESTS, headers=key.headers, json=request_body(demo, start="2026-12-03T08:30:00+01:00")),
        "start",
    )
    later = await client.get(
        "/integration/v1/free-times",
        headers=key.headers,
        params={"doctor": params["doctor"], "location": params["location"], "from": "2026-12-04", "to": "2026-12-31"},
    )
    assert later.status_code == 200 and later.json()["free"] == []
