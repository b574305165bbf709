"""Appointment requests created through the FHIR interface: the integration API's rules and codes as
OperationOutcome, conditional create on the clinic's identifier, and bad input that writes nothing (SQLite and
PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.store.integration_tables import IntegrationRequest
from doctordesk.store.tables import Appointment, AuditLog
from tests.support.fhir import FHIR_JSON, assert_outcome, resource_of, written
from tests.support.fhir_models import validate
from tests.support.integration import FREE_START, make_key

SYSTEM = "urn:doctordesk:appointment-external-id"


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def request(demo: Any, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "status": "proposed",
        "serviceType": [{"text": "consultation"}],
        "start": FREE_START,
        "minutesDuration": 30,
        "comment": "Back pain since Monday",
        "participant": [
            {"actor": {"reference": f"Patient/{demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{demo.users['doctor1']}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{demo.locations['berlin']}"}, "status": "needs-action"},
        ],
    }
    body.update(overrides)
    validate(body)  # every request the tests send is a valid R4 Appointment
    return body


async def post(client, headers, body, **extra_headers):
    return await client.post(
        "/fhir/Appointment",
        content=json.dumps(body),
        headers={**headers, "Content-Type": FHIR_JSON, **extra_headers},
    )


async def test_a_proposed_appointment_is_a_request_as_through_the_integration_api(client, key, demo, runtime):
    response = await post(client, key.headers, request(demo))
    body = resource_of(response, 201)
    assert body["status"] == "proposed" and body["start"] == FREE_START and body["comment"] == "Back pain since Monday"
    assert response.headers["etag"] == 'W/"1"'
    assert response.headers["location"].endswith(f"/fhir/Appointment/{body['id']}/_history/1")
    async with runtime.db.read() as s:
        audit = (await s.scalars(select(AuditLog).where(AuditLog.action == "appointment.request"))).one()
        origin = await s.get(IntegrationRequest, int(body["id"]))
    assert audit.details["service_account"]["key_id"] == key.key_id and origin.service_account_id == key.account_id
    # The integration API reads the same appointment.
    same = await client.get(f"/integration/v1/appointments/{body['id']}", headers=key.headers)
    assert same.json()["status"]["name"] == "requested" and same.json()["note"] == "Back pain since Monday"


async def test_a_patient_requests_for_themself_with_their_own_token(client, login, demo):
    patient = await login("patient1")
    body = resource_of(await post(client, patient.headers, request(demo)), 201)
    assert body["participant"][0]["actor"]["reference"] == f"Patient/{demo.patients['patient1']}"


async def test_a_patient_naming_another_patient_gets_404_and_nothing_is_written(client, login, demo, runtime):
    patient = await login("patient2")
    before = await written(runtime)
    assert_outcome(await post(client, patient.headers, request(demo)), 404, "NOT_FOUND")
    assert await written(runtime) == before


async def test_doctors_do_not_request_appointments(client, login, demo, runtime):
    doctor = await login("doctor1")
    before = await written(runtime)
    assert_outcome(await post(client, doctor.headers, request(demo)), 403, "FORBIDDEN")
    assert await written(runtime) == before


async def test_a_time_outside_work_hours_is_422_with_the_screens_code_and_writes_nothing(client, key, demo, runtime):
    before = await written(runtime)
    response = await post(client, key.headers, request(demo, start="2026-11-26T22:00:00+01:00"))
    assert_outcome(response, 422, "FIELDS_VALIDATION_ERROR", expression="Appointment.start")
    assert await written(runtime) == before


async def test_an_unknown_practitioner_is_422_naming_the_participant(client, key, demo, runtime):
    body = request(demo)
    body["participant"][1]["actor"]["reference"] = "Practitioner/9999"
    before = await written(runtime)
    response = await post(client, key.headers, body)
    assert_outcome(response, 422, "FIELDS_VALIDATION_ERROR", expression="Appointment.participant[Practitioner]")
    assert await written(runtime) == before


@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b"{not json", 400),
        (b"[]", 400),
        (json.dumps({"resourceType": "Patient"}).encode(), 400),
        (b"\xff\xfe", 400),
        (b"{}", 400),
    ],
)
async def test_malformed_bodies_are_400_and_write_nothing(client, key, demo, runtime, content, status):
    before = await written(runtime)
    response = await client.post(
        "/fhir/Appointment", content=content, headers={**key.headers, "Content-Type": FHIR_JSON}
    )
    assert_outcome(response, status, "FIELDS_VALIDATION_ERROR")
    assert await written(runtime) == before


@pytest.mark.parametrize(
    "overrides",
    [
        {"status": "booked"},
        {"start": "2026-11-26T11:00:00"},
        {"start": "2026-11-26T11:00:30+01:00"},
        {"minutesDuration": 1000},
        {"end": "2026-11-26T11:10:00+01:00"},
        {"participant": []},
        {"priority": 3},
        {"identifier": [{"system": "urn:other", "value": "x"}]},
        {"comment": 5},
    ],
)
async def test_requests_this_interface_does_not_accept_are_400_naming_the_element(
    client, key, demo, runtime, overrides
):
    body = {**request(demo), **overrides}
    before = await written(runtime)
    response = await post(client, key.headers, body)
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR")
    (element,) = {e for i in response.json()["issue"] for e in i["expression"]}
    assert element == f"Appointment.{next(iter(overrides))}"
    assert await written(runtime) == before


async def test_an_oversize_body_is_413_and_writes_nothing(client, key, demo, runtime):
    before = await written(runtime)
    body = request(demo, comment="x" * 70_000)
    assert_outcome(await post(client, key.headers, body), 413, "PAYLOAD_TOO_LARGE")
    assert await written(runtime) == before


async def test_another_media_type_is_415(client, key, demo, runtime):
    response = await client.post(
        "/fhir/Appointment", content=json.dumps(request(demo)), headers={**key.headers, "Content-Type": "text/plain"}
    )
    assert_outcome(response, 415, "NOT_SUPPORTED")


async def test_conditional_create_answers_the_existing_appointment_and_writes_once(client, key, demo, runtime):
    body = request(demo, identifier=[{"system": SYSTEM, "value": "his-4711"}])
    first = resource_of(
        await post(client, key.headers, body, **{"If-None-Exist": f"identifier={SYSTEM}|his-4711"}), 201
    )
    before = await written(runtime)
    again = await post(client, key.headers, body, **{"If-None-Exist": "identifier=his-4711"})
    assert resource_of(again, 200)["id"] == first["id"]
    assert first["identifier"] == [{"system": SYSTEM, "value": "his-4711"}]
    assert await written(runtime) == before
    found = resource_of(await client.get(f"/fhir/Appointment?identifier={SYSTEM}|his-4711", headers=key.headers))
    assert [e["resource"]["id"] for e in found["entry"]] == [first["id"]]


async def test_concurrent_conditional_creates_make_one_appointment(client, key, demo, runtime):
    body = request(demo)
    headers = {"If-None-Exist": "identifier=burst-1"}
    answers = await asyncio.gather(*[post(client, key.headers, body, **headers) for _ in range(5)])
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 200, 201], [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    async with runtime.db.read() as s:
        rows = (await s.scalars(select(Appointment).where(Appointment.external_id == "burst-1"))).all()
    assert len(rows) == 1


async def test_an_identifier_in_use_without_if_none_exist_is_409(client, key, demo, runtime):
    body = request(demo, identifier=[{"system": SYSTEM, "value": "dup-1"}])
    resource_of(await post(client, key.headers, body), 201)
    before = await written(runtime)
    later = request(demo, start="2026-11-26T12:00:00+01:00", identifier=[{"system": SYSTEM, "value": "dup-1"}])
    assert_outcome(await post(client, key.headers, later), 409, "IDEMPOTENCY_KEY_REUSED")
    assert await written(runtime) == before


async def test_a_malformed_if_none_exist_is_refused(client, key, demo, runtime):
    before = await written(runtime)
    response = await post(client, key.headers, request(demo), **{"If-None-Exist": "status=booked"})
    assert_outcome(response, 400, "NOT_SUPPORTED")
    assert await written(runtime) == before


async def test_a_read_only_key_cannot_create(client, login, demo, runtime):
    reader = await make_key(client, (await login("admin")).headers, name="reader", scopes=["appointments:read"])
    before = await written(runtime)
    assert_outcome(await post(client, reader.headers, request(demo)), 403, "FORBIDDEN")
    assert await written(runtime) == before


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 20_000 + b"]" * 20_000,
        json.dumps({"resourceType": "Appointment", "status": "proposed", "participant": ["Patient/1"]}).encode(),
        json.dumps(
            {"resourceType": "Appointment", "status": "proposed", "participant": [{"actor": "Patient/1"}]}
        ).encode(),
        json.dumps({"resourceType": "Appointment", "status": "proposed", "start": 5}).encode(),
        b'{"resourceType": "Appointment", "status": "proposed", "minutesDuration": 1e400}',
        json.dumps({"resourceType": "Appointment", "status": ["proposed"]}).encode(),
        json.dumps({"resourceType": "Appointment", "serviceType": "x", "status": "proposed"}).encode(),
        json.dumps({"resourceType": "Appointment", "identifier": {"value": 1}, "status": "proposed"}).encode(),
    ],
)
async def test_hostile_bodies_get_an_operation_outcome_never_a_500(client, key, demo, runtime, content):
    before = await written(runtime)
    response = await client.post(
        "/fhir/Appointment", content=content, headers={**key.headers, "Content-Type": FHIR_JSON}
    )
    assert response.status_code in (400, 413), response.text
    resource_of(response, response.status_code)
    assert await written(runtime) == before


async def test_a_service_type_with_control_characters_is_refused(client, key, demo, runtime):
    before = await written(runtime)
    response = await post(client, key.headers, request(demo, serviceType=[{"text": "con\x00sult"}]))
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Appointment.serviceType")
    assert await written(runtime) == before
