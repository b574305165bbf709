"""Dates at the edges of what Python holds (the years 1 and 9999, offsets up to ±14:00) and beyond the accepted range
(docs/protocol.md#dates: the years 1900-2999) are refused with each interface's error shape and write nothing:
never a 500 from an OverflowError, whatever the entry point (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from doctordesk.domain import moments
from tests.integration.web.strict_support import row_counts
from tests.support.appointments import fhir_request
from tests.support.fhir import FHIR_JSON, assert_outcome, resource_of
from tests.support.integration import make_key, request_body
from tests.support.review import REQUESTED, aid, approve_url, card, snapshot

# The reproductions of far-date failures, and more of the same class: the first instant Python cannot move to UTC, the
# last it cannot add a visit to, leap-second-like and out-of-range offsets, the first and last accepted years.
FAR_STARTS = [
    "9999-12-31T23:30:00-12:00",
    "0001-01-01T00:30:00+14:00",
    "9999-12-31T10:30:00-14:00",
    "9999-12-31T23:59:00Z",
    "0001-01-01T00:00:00Z",
    "2999-12-31T23:30:00-12:00",  # an accepted day, but 3000 in UTC
    "1900-01-01T00:30:00+14:00",  # an accepted day, but 1899 in UTC
    "2027-01-01T10:00:00+15:00",  # no place on earth is 15 hours ahead
    "2027-06-30T23:59:60Z",
]
FAR_DAYS = ["9999-12-31", "0001-01-01", "1899-12-31", "3000-01-01", "0000-01-01"]


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def _error(response: Any, status: int, field: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and field in body["fields"], body
    return body


async def test_an_integration_request_for_a_far_start_is_a_field_error_and_writes_nothing(client, key, demo, runtime):
    before = await row_counts(runtime)
    for start in FAR_STARTS:
        response = await client.post(
            "/integration/v1/appointment-requests", headers=key.headers, json=request_body(demo, start=start)
        )
        _error(response, 422, "start")
    assert await row_counts(runtime) == before


async def test_the_out_of_range_message_names_the_accepted_range(client, key, demo):
    response = await client.post(
        "/integration/v1/appointment-requests",
        headers=key.headers,
        json=request_body(demo, start="9999-12-31T23:30:00-12:00"),
    )
    assert _error(response, 422, "start")["fields"]["start"] == moments.RANGE_MESSAGE


async def test_a_reschedule_request_for_a_far_start_is_a_field_error_and_changes_nothing(client, key, demo, runtime):
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    for start in FAR_STARTS:
        response = await client.post(
            f"/integration/v1/appointments/{a}/reschedule-request", headers=key.headers, json={"start": start}
        )
        _error(response, 422, "start")
    assert await snapshot(runtime, a) == before


async def test_a_fhir_appointment_with_a_far_start_is_an_operation_outcome_and_writes_nothing(
    client, key, demo, runtime
):
    before = await row_counts(runtime)
    for start in FAR_STARTS:
        response = await client.post(
            "/fhir/Appointment",
            content=json.dumps(fhir_request(demo, start)),
            headers={**key.headers, "Content-Type": FHIR_JSON},
        )
        assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Appointment.start")
    assert await row_counts(runtime) == before


async def test_a_fhir_appointment_whose_end_is_far_is_refused(client, key, demo, runtime):
    body = {**fhir_request(demo, "2026-11-26T11:00:00+01:00"), "end": "9999-12-31T23:59:00-12:00"}
    body.pop("minutesDuration")
    before = await row_counts(runtime)
    response = await client.post(
        "/fhir/Appointment", content=json.dumps(body), headers={**key.headers, "Content-Type": FHIR_JSON}
    )
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR")
    assert await row_counts(runtime) == before


FAR_SEARCHES = [
    "/fhir/Appointment?date=le9999-12-31T23:59:59Z",
    "/fhir/Appointment?date=9999-12-31",
    "/fhir/Appointment?date=9999",
    "/fhir/Appointment?date=gt9999-12",
    "/fhir/Appointment?date=ge0001-01-01T00:00:00%2B14:00",
    "/fhir/Appointment?date=lt2027-01-01T10:00:00%2B23:59",
    "/fhir/Appointment?date=eq2027-06-30T23:59:60Z",
    "/fhir/AuditEvent?date=le9999-12-31T23:59:59Z",
    "/fhir/AuditEvent?date=ge0001",
    "/fhir/Slot?schedule=Schedule/{d}-{b}&start=ge9999-12-30&start=lt9999-12-31",
    "/fhir/Slot?schedule=Schedule/{d}-{b}&start=ge9999-12-30",
    "/fhir/Slot?schedule=Schedule/{d}-{b}&start=ge0001-01-01&start=lt0001-01-02",
]


async def test_a_fhir_search_on_a_far_date_is_an_operation_outcome(client, key, login, demo):
    admin = (await login("admin")).headers  # admins read the audit trail
    for query in FAR_SEARCHES:
        url = query.format(d=demo.users["doctor1"], b=demo.locations["berlin"])
        response = await client.get(url, headers=admin if "AuditEvent" in url else key.headers)
        assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR")


async def test_a_fhir_search_at_the_ends_of_the_accepted_range_is_answered(client, key, login):
    admin = (await login("admin")).headers
    for query in (
        "/fhir/Appointment?date=2999",
        "/fhir/Appointment?date=le2999-12-31T23:59:59Z",
        "/fhir/Appointment?date=ge1900",
        "/fhir/AuditEvent?date=ge1900-01-01T00:00:00Z",
    ):
        bundle = resource_of(await client.get(query, headers=admin if "AuditEvent" in query else key.headers))
        assert bundle["resourceType"] == "Bundle"


async def test_a_far_slot_id_is_not_found(client, key, demo):
    d, b = demo.users["doctor1"], demo.locations["berlin"]
    for stamp in ("999912312359", "000101010000"):
        assert_outcome(await client.get(f"/fhir/Slot/{d}-{b}-{stamp}", headers=key.headers), 404, "NOT_FOUND")


async def test_free_times_for_a_far_day_are_a_field_error(client, key, demo):
    for day in FAR_DAYS:
        params = {"doctor": demo.users["doctor1"], "location": demo.locations["berlin"], "from": day, "to": day}
        _error(await client.get("/integration/v1/free-times", headers=key.headers, params=params), 422, "from")


async def test_an_alternative_on_a_far_date_is_a_field_error_and_changes_nothing(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    for day in FAR_DAYS:
        fields = {**card(1, demo.users["doctor1"], demo.locations["berlin"], day, "23:30"), "version": "1"}
        response = await client.post(approve_url(a), headers=doctor.headers, data=fields)
        _error(response, 422, "date~1")
    assert await snapshot(runtime, a) == before


async def test_admin_dates_far_away_are_field_errors_and_write_nothing(client, login, demo, runtime):
    admin = await login("admin")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    before = await row_counts(runtime)
    for day in FAR_DAYS:
        exception = await client.post(
            f"/admin/doctors/{doctor}/hours-exceptions",
            headers=admin.headers,
            json={"day": day, "kind": "holiday", "location_id": berlin},
        )
        _error(exception, 422, "day")
        screen = await client.post(
            "/profile/admin/hours/exceptions/add",
            headers=admin.headers,
            data={"doctor": str(doctor), "location": str(berlin), "day": day, "kind": "holiday"},
        )
        _error(screen, 422, "day")
    assert await row_counts(runtime) == before


async def test_list_and_audit_filters_on_far_days_are_field_errors(client, login):
    admin = await login("admin")
    doctor = await login("doctor1")
    for day in FAR_DAYS:
        await _filters_refuse(client, admin.headers, doctor.headers, day)


async def _filters_refuse(client: Any, admin: dict[str, str], doctor: dict[str, str], day: str) -> None:
    _error(await client.get("/api/appointments", headers=doctor, params={"to": day}), 422, "to")
    _error(await client.put("/profile/appointments", headers=doctor, params={"to": day}), 422, "to")
    audit = await client.get("/admin/audit", headers=admin, params={"to": f"{day}T23:59:59Z"})
    _error(audit, 422, "to")
    screen = await client.patch("/profile/admin/audit/filter", headers=admin, data={"to": day})
    _error(screen, 422, "to")


async def test_a_booking_for_a_far_start_is_refused(client, login, demo, runtime):
    patient = await login("patient1")
    before = await row_counts(runtime)
    for start in ("99991231T2330Z", "00010101T0030Z", "99991231T2359Z"):
        form = {
            "doctor": str(demo.users["doctor1"]),
            "location": str(demo.locations["berlin"]),
            "service": "consultation",
            "start": start,
        }
        _error(await client.post("/profile/book/request", headers=patient.headers, data=form), 422, "start")
    week = await client.put("/profile/book", headers=patient.headers, params={"week": "9999-12-31"})
    _error(week, 422, "week")
    assert await row_counts(runtime) == before
