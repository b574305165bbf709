"""The clinic's directory through the FHIR interface: Practitioner, Location, PractitionerRole with work hours,
Schedule, Slot (the integration API's own free times) and Patient with its rights (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from doctordesk.domain.appointments.status import Status
from doctordesk.store.tables import Appointment
from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key
from tests.support.review import REQUESTED, aid


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def get(client, headers, url, status=200):
    return resource_of(await client.get(url, headers=headers), status)


async def test_doctors_are_practitioners_and_locations_carry_their_time_zone(client, key, demo):
    doctors = entries(await get(client, key.headers, "/fhir/Practitioner"))
    assert {d["id"] for d in doctors} == {str(demo.users[u]) for u in ("doctor1", "doctor2", "doctor3")}
    one = await get(client, key.headers, f"/fhir/Practitioner/{demo.users['doctor1']}")
    assert one in doctors
    berlin = await get(client, key.headers, f"/fhir/Location/{demo.locations['berlin']}")
    assert berlin["extension"] == [
        {"url": "http://hl7.org/fhir/StructureDefinition/timezone", "valueCode": "Europe/Berlin"}
    ]
    assert len(entries(await get(client, key.headers, "/fhir/Location"))) == len(demo.locations)
    assert_outcome(
        await client.get(f"/fhir/Practitioner/{demo.users['patient1']}", headers=key.headers), 404, "NOT_FOUND"
    )


async def test_a_practitioner_role_carries_the_work_hours_as_available_time(client, key, demo):
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    role = await get(client, key.headers, f"/fhir/PractitionerRole/{d1}-{berlin}")
    assert role["practitioner"]["reference"] == f"Practitioner/{d1}"
    assert role["location"][0]["reference"] == f"Location/{berlin}"
    assert role["availableTime"] == [
        {
            "daysOfWeek": ["mon", "tue", "wed", "thu", "fri"],
            "availableStartTime": "08:00:00",
            "availableEndTime": "17:00:00",
        }
    ]
    found = entries(await get(client, key.headers, f"/fhir/PractitionerRole?practitioner=Practitioner/{d1}"))
    assert f"{d1}-{berlin}" in {r["id"] for r in found}
    assert {r["practitioner"]["reference"] for r in found} == {f"Practitioner/{d1}"}


async def test_schedules_by_actor(client, key, demo):
    berlin = demo.locations["berlin"]
    found = entries(await get(client, key.headers, f"/fhir/Schedule?actor=Location/{berlin}"))
    assert found and all(f"Location/{berlin}" in [a["reference"] for a in s["actor"]] for s in found)
    assert_outcome(await client.get("/fhir/Schedule/1-99999", headers=key.headers), 404, "NOT_FOUND")


async def test_free_slots_are_the_integration_apis_free_times(client, key, demo):
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    free = await client.get(
        "/integration/v1/free-times",
        headers=key.headers,
        params={"doctor": d1, "location": berlin, "from": "2026-11-23", "to": "2026-11-24"},
    )
    expected = [f["start"] for f in free.json()["free"]]
    span = "start=ge2026-11-23T00:00:00%2B01:00&start=lt2026-11-25T00:00:00%2B01:00"
    url = f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&{span}&status=free&_count=7"
    starts: list[str] = []
    while url:
        page = await get(client, key.headers, url.removeprefix("http://testserver"))
        starts.extend(s["start"] for s in entries(page))
        url = next_link(page) or ""
    assert starts == expected and len(expected) > 7


async def test_a_slot_reads_free_and_busy_once_taken(client, key, demo, runtime):
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    # Wed 25 Nov 09:00 Berlin is the demo's open request (requests do not hold slots).
    slot_id = f"{d1}-{berlin}-202611250800"
    slot = await get(client, key.headers, f"/fhir/Slot/{slot_id}")
    assert slot["status"] == "free" and slot["start"] == "2026-11-25T09:00:00+01:00"
    async with runtime.db.transaction() as s:
        await s.execute(
            update(Appointment).where(Appointment.id == aid(demo, REQUESTED)).values(status=int(Status.APPROVED))
        )
    assert (await get(client, key.headers, f"/fhir/Slot/{slot_id}"))["status"] == "busy"
    assert_outcome(await client.get(f"/fhir/Slot/{d1}-{berlin}-202611250300", headers=key.headers), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("query", "status"),
    [("", 400), ("schedule=Schedule/1-1", 400), ("schedule=Schedule/99-99&start=ge2026-11-23&start=lt2026-11-24", 404)],
)
async def test_slot_searches_need_a_schedule_and_a_range(client, key, query, status):
    assert_outcome(
        await client.get(f"/fhir/Slot?{query}", headers=key.headers),
        status,
        "NOT_FOUND" if status == 404 else "FIELDS_VALIDATION_ERROR",
    )


async def test_patients_see_themselves_and_doctors_their_own_patients(client, login, demo):
    patient, doctor = await login("patient2"), await login("doctor3")
    me = entries(await get(client, patient.headers, "/fhir/Patient"))
    assert [p["id"] for p in me] == [str(demo.patients["patient2"])]
    assert_outcome(
        await client.get(f"/fhir/Patient/{demo.patients['patient1']}", headers=patient.headers), 404, "NOT_FOUND"
    )
    theirs = {p["id"] for p in entries(await get(client, doctor.headers, "/fhir/Patient"))}
    mine = entries(await get(client, doctor.headers, "/fhir/Appointment?_count=200"))
    assert theirs == {a["participant"][0]["actor"]["reference"].removeprefix("Patient/") for a in mine}


async def test_a_patient_reads_their_email_address_as_telecom(client, login, demo):
    patient = await login("patient2")
    [me] = entries(await get(client, patient.headers, "/fhir/Patient"))
    assert me["telecom"] == [{"system": "email", "value": "patient2@example.org", "use": "home"}]


async def test_slots_follow_the_work_hours_exceptions(client, key, demo, login):
    """A holiday takes the day's slots away (a slot of it reads 404) and extra hours add slots on a day without
    weekly hours, as the booking screen's free times (admin hours exceptions)."""
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    admin = await login("admin")
    before = await get(client, key.headers, f"/fhir/Slot/{d1}-{berlin}-202611250800")
    assert before["status"] == "free"
    for body in (
        {"day": "2026-11-25", "kind": "holiday", "note": "Clinic closed"},
        {"day": "2026-11-29", "kind": "extra", "location_id": berlin, "opens": "16:00", "closes": "17:00"},
    ):
        added = await client.post(f"/admin/doctors/{d1}/hours-exceptions", json=body, headers=admin.headers)
        assert added.status_code == 200 and added.json()["applied"] is True, added.text
    assert_outcome(await client.get(f"/fhir/Slot/{d1}-{berlin}-202611250800", headers=key.headers), 404, "NOT_FOUND")
    span = "start=ge2026-11-24T00:00:00%2B01:00&start=lt2026-11-30T00:00:00%2B01:00"
    slots = entries(await get(client, key.headers, f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&{span}&_count=200"))
    days = {s["start"][:10] for s in slots}
    assert "2026-11-24" in days and "2026-11-25" not in days  # the day before keeps its slots
    sunday = [s["start"] for s in slots if s["start"].startswith("2026-11-29")]
    assert sunday == ["2026-11-29T16:00:00+01:00", "2026-11-29T16:30:00+01:00"]
