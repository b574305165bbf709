"""Suggested Scheduling through the FHIR interface: offers as AppointmentResponse, the patient's answer created as
one, If-Match versions (412), and the whole round trip (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.fhir.test_fhir_create import post as post_appointment
from tests.integration.fhir.test_fhir_create import request as appointment_request
from tests.support.fhir import FHIR_JSON, assert_outcome, entries, resource_of, written
from tests.support.fhir_models import validate
from tests.support.integration import make_key
from tests.support.review import PENDING_5, PENDING_9, REQUESTED, aid, approve_url, card


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def answer(demo: Any, appointment_id: int, status: str, patient: str = "patient1", **extra: Any) -> dict[str, Any]:
    body = {
        "resourceType": "AppointmentResponse",
        "appointment": {"reference": f"Appointment/{appointment_id}"},
        "actor": {"reference": f"Patient/{demo.patients[patient]}"},
        "participantStatus": status,
        **extra,
    }
    validate(body)
    return body


async def post(client, headers, body, **extra):
    return await client.post(
        "/fhir/AppointmentResponse",
        content=json.dumps(body),
        headers={**headers, "Content-Type": FHIR_JSON, **extra},
    )


async def offers(client, headers, appointment_id):
    bundle = resource_of(await client.get(f"/fhir/AppointmentResponse?appointment={appointment_id}", headers=headers))
    return entries(bundle)


async def test_request_via_fhir_then_alternatives_on_the_screen_then_accepted_via_fhir_reads_booked(
    client, key, login, demo
):
    created = resource_of(await post_appointment(client, key.headers, appointment_request(demo)), 201)
    a = int(created["id"])
    doctor, patient = await login("doctor1"), await login("patient1")
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    fields = {
        **card(1, d1, berlin, "2026-11-27", "10:00"),
        **card(2, d1, berlin, "2026-11-27", "14:00"),
        "version": "1",
    }
    decided = await client.post(approve_url(a), headers=doctor.headers, data=fields)
    assert decided.status_code == 200, decided.text
    pending = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=key.headers))
    assert pending["status"] == "pending" and pending["participant"][0]["status"] == "needs-action"
    offered = await offers(client, patient.headers, a)
    assert [(o["start"], o["participantStatus"]) for o in offered] == [
        ("2026-11-27T10:00:00+01:00", "tentative"),
        ("2026-11-27T14:00:00+01:00", "tentative"),
    ]
    version = pending["meta"]["versionId"]
    response = await post(
        client,
        patient.headers,
        answer(demo, a, "accepted", start="2026-11-27T14:00:00+01:00"),
        **{"If-Match": f'W/"{version}"'},
    )
    given = resource_of(response, 201)
    assert given["id"] == f"answer-{a}" and given["participantStatus"] == "accepted"
    booked = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=key.headers))
    assert booked["status"] == "booked" and booked["start"] == "2026-11-27T14:00:00+01:00"
    assert int(booked["meta"]["versionId"]) > int(version)
    assert response.headers["etag"] == f'W/"{booked["meta"]["versionId"]}"'
    after = await offers(client, patient.headers, a)
    assert [o["participantStatus"] for o in after] == ["declined", "accepted", "accepted"]


async def test_a_stale_if_match_is_412_and_changes_nothing(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    (first, *_) = await offers(client, patient.headers, a)
    before = await written(runtime)
    response = await post(
        client, patient.headers, answer(demo, a, "accepted", start=first["start"]), **{"If-Match": 'W/"7"'}
    )
    assert_outcome(response, 412, "APPOINTMENT_CHANGED")
    assert await written(runtime) == before


async def test_declining_rejects_every_offer_and_cancels(client, login, demo):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    given = resource_of(await post(client, patient.headers, answer(demo, a, "declined")), 201)
    assert given["participantStatus"] == "declined" and "start" not in given
    cancelled = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=patient.headers))
    assert cancelled["status"] == "cancelled"


async def test_a_time_that_was_not_offered_is_422_and_changes_nothing(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    before = await written(runtime)
    response = await post(client, patient.headers, answer(demo, a, "accepted", start="2026-12-01T09:00:00+01:00"))
    assert_outcome(response, 422, "FIELDS_VALIDATION_ERROR", expression="AppointmentResponse.start")
    assert await written(runtime) == before


async def test_an_offer_with_a_coverage_warning_needs_the_acknowledgement_extension(client, login, demo, runtime):
    patient = await login("patient4")
    a = aid(demo, PENDING_9)
    risky = next(o for o in await offers(client, patient.headers, a) if "Out of network" in o["comment"])
    before = await written(runtime)
    refused = await post(client, patient.headers, answer(demo, a, "accepted", "patient4", start=risky["start"]))
    assert_outcome(refused, 422, "FIELDS_VALIDATION_ERROR")
    assert await written(runtime) == before
    ack = [{"url": "urn:doctordesk:fhir:coverage-acknowledged", "valueBoolean": True}]
    body = answer(demo, a, "accepted", "patient4", start=risky["start"], extension=ack)
    resource_of(await post(client, patient.headers, body), 201)


async def test_answering_for_someone_else_or_their_appointment_is_404(client, login, demo, runtime):
    patient = await login("patient2")
    before = await written(runtime)
    mine_as_other = answer(demo, aid(demo, PENDING_5), "declined", "patient1")
    assert_outcome(await post(client, patient.headers, mine_as_other), 404, "NOT_FOUND")
    their_appointment = answer(demo, aid(demo, PENDING_5), "declined", "patient2")
    assert_outcome(await post(client, patient.headers, their_appointment), 404, "NOT_FOUND")
    assert await written(runtime) == before


async def test_only_the_patients_own_account_answers(client, key, login, demo, runtime):
    doctor = await login("doctor1")
    before = await written(runtime)
    body = answer(demo, aid(demo, PENDING_5), "declined")
    assert_outcome(await post(client, doctor.headers, body), 403, "FORBIDDEN")
    assert_outcome(await post(client, key.headers, body), 403, "FORBIDDEN")
    assert await written(runtime) == before


async def test_answering_a_request_without_offers_is_409(client, login, demo, runtime):
    patient = await login("patient1")
    before = await written(runtime)
    response = await post(client, patient.headers, answer(demo, aid(demo, REQUESTED), "declined"))
    assert_outcome(response, 409, "INVALID_TRANSITION")
    assert await written(runtime) == before


@pytest.mark.parametrize(
    "body",
    [
        {"resourceType": "AppointmentResponse", "participantStatus": "accepted"},
        {"resourceType": "Appointment", "status": "proposed"},
        {"resourceType": "AppointmentResponse", "participantStatus": "tentative", "appointment": {"reference": "x"}},
    ],
)
async def test_malformed_answers_are_400(client, login, demo, runtime, body):
    patient = await login("patient1")
    before = await written(runtime)
    assert_outcome(await post(client, patient.headers, body), 400, "FIELDS_VALIDATION_ERROR")
    assert await written(runtime) == before


async def test_offers_read_by_id_and_not_for_other_doctors(client, login, demo):
    doctor, other = await login("doctor1"), await login("doctor2")
    a = aid(demo, PENDING_5)
    (first, *_) = await offers(client, doctor.headers, a)
    again = resource_of(await client.get(f"/fhir/AppointmentResponse/{first['id']}", headers=doctor.headers))
    assert again == first
    assert_outcome(
        await client.get(f"/fhir/AppointmentResponse/{first['id']}", headers=other.headers), 404, "NOT_FOUND"
    )
    assert await offers(client, other.headers, a) == []
    assert_outcome(
        await client.get("/fhir/AppointmentResponse", headers=doctor.headers), 400, "FIELDS_VALIDATION_ERROR"
    )
