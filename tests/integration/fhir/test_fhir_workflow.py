"""Appointment content true to the workflow (docs/fhir.md#appointment): who cancelled and why, declined apart from
cancelled, participant statuses that follow the appointment, the requested time and the open offers of a pending
appointment (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from tests.integration.fhir.test_fhir_create import post, request
from tests.support.fhir import entries, resource_of
from tests.support.integration import make_key
from tests.support.review import DECLINED, PENDING_5, aid

HL7 = "http://terminology.hl7.org/CodeSystem/appointment-cancellation-reason"


def codes(body):
    return {(c["system"].rsplit("/", 1)[-1].rsplit(":", 1)[-1], c["code"]) for c in body["cancelationReason"]["coding"]}


def statuses(body):
    return [p["status"] for p in body["participant"]]


@pytest.mark.parametrize(
    ("by", "hl7", "participants"),
    [
        ("patient", "pat", ["declined", "accepted", "declined"]),  # the place follows the appointment
        ("clinic", "prov", ["accepted", "declined", "declined"]),
    ],
)
async def test_a_cancel_keeps_who_and_why(client, login, demo, by, hl7, participants):
    key = await make_key(client, (await login("admin")).headers)
    created = resource_of(await post(client, key.headers, request(demo)), 201)
    canceled = await client.post(
        f"/integration/v1/appointments/{created['id']}/cancel",
        headers=key.headers,
        json={"by": by, "reason": "Feeling better", "version": 1},
    )
    assert canceled.status_code == 200, canceled.text
    body = resource_of(await client.get(f"/fhir/Appointment/{created['id']}", headers=key.headers))
    assert body["status"] == "cancelled"
    assert body["cancelationReason"]["text"] == "Feeling better"
    assert codes(body) == {("appointment-cancellation-reason", hl7), ("cancellation", "canceled")}
    assert statuses(body) == participants
    assert "requestedPeriod" not in body


async def test_declined_reads_apart_from_cancelled(client, login, demo):
    key = await make_key(client, (await login("admin")).headers)
    body = resource_of(await client.get(f"/fhir/Appointment/{aid(demo, DECLINED)}", headers=key.headers))
    assert body["status"] == "cancelled"
    assert codes(body) == {("appointment-cancellation-reason", "prov"), ("cancellation", "declined")}
    assert statuses(body) == ["accepted", "declined", "declined"]


async def test_a_pending_appointment_shows_the_requested_time_and_its_open_offers(client, login, demo):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    body = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=patient.headers))
    assert body["status"] == "pending" and statuses(body)[0] == "needs-action"
    assert body["requestedPeriod"] == [{"start": body["start"], "end": body["end"]}]
    offered = [e for e in body["extension"] if e["url"] == "urn:doctordesk:fhir:offered-time"]
    responses = entries(
        resource_of(await client.get(f"/fhir/AppointmentResponse?appointment=Appointment/{a}", headers=patient.headers))
    )
    open_offers = {r["id"]: r for r in responses if r["participantStatus"] == "tentative"}
    assert len(offered) == len(open_offers) > 0
    for ext in offered:
        parts = {p["url"]: p for p in ext["extension"]}
        response = open_offers[parts["response"]["valueReference"]["reference"].removeprefix("AppointmentResponse/")]
        assert parts["period"]["valuePeriod"] == {"start": response["start"], "end": response["end"]}
        assert parts["practitioner"]["valueReference"]["reference"] == response["actor"]["reference"]
