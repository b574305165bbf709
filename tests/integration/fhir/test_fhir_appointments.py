"""Appointment read and search through the FHIR interface: the status mapping, ETag and version, who sees what,
search parameters, lenient and strict handling, keyset paging under concurrent inserts (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import update

from doctordesk.domain.appointments.status import Status
from doctordesk.store.tables import Appointment
from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key, request_body
from tests.support.review import APPROVED, CANCELED, DECLINED, PENDING_5, REQUESTED, aid


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def read(client, headers, appointment_id):
    return resource_of(await client.get(f"/fhir/Appointment/{appointment_id}", headers=headers))


@pytest.mark.parametrize(
    ("status", "fhir_status"),
    [
        (Status.REQUESTED, "proposed"),
        (Status.PENDING_RESPONSE, "pending"),
        (Status.PENDING_RESPONSE_COVERAGE_RISK, "pending"),
        (Status.APPROVED, "booked"),
        (Status.DECLINED, "cancelled"),
        (Status.CANCELED, "cancelled"),
        (Status.COMPLETED, "fulfilled"),
        (Status.NO_SHOW, "noshow"),
    ],
)
async def test_each_status_maps_to_its_fhir_appointment_status(client, key, demo, runtime, status, fhir_status):
    a = aid(demo, REQUESTED)
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a).values(status=int(status), decline_reason="No"))
    body = await read(client, key.headers, a)
    assert body["status"] == fhir_status
    assert ("cancelationReason" in body) == (fhir_status == "cancelled")
    if status is Status.DECLINED:
        assert body["cancelationReason"]["coding"][0]["code"] == "prov"
        assert body["cancelationReason"]["text"] == "No"


async def test_an_appointment_names_its_patient_practitioner_and_location_and_its_local_times(client, key, demo):
    body = await read(client, key.headers, aid(demo, REQUESTED))
    actors = [p["actor"]["reference"] for p in body["participant"]]
    assert actors == [
        f"Patient/{demo.patients['patient1']}",
        f"Practitioner/{demo.users['doctor1']}",
        f"Location/{demo.locations['berlin']}",
    ]
    # Wed 25 Nov 09:00 in Berlin, 30 minutes.
    assert body["start"] == "2026-11-25T09:00:00+01:00" and body["end"] == "2026-11-25T09:30:00+01:00"
    assert body["minutesDuration"] == 30


async def test_etag_and_version_id_follow_the_appointments_version(client, key, demo, runtime):
    a = aid(demo, APPROVED)
    first = await client.get(f"/fhir/Appointment/{a}", headers=key.headers)
    assert first.headers["etag"] == 'W/"1"' and first.json()["meta"]["versionId"] == "1"
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a).values(version=Appointment.version + 1))
    again = await client.get(f"/fhir/Appointment/{a}", headers=key.headers)
    assert again.headers["etag"] == 'W/"2"' and again.json()["meta"]["versionId"] == "2"


async def test_another_doctors_appointment_is_404_exactly_as_an_unknown_one(client, login, demo):
    other = await login("doctor2")
    mine = await client.get(f"/fhir/Appointment/{aid(demo, REQUESTED)}", headers=other.headers)
    unknown = await client.get("/fhir/Appointment/987654", headers=other.headers)
    assert_outcome(mine, 404, "NOT_FOUND")
    assert mine.json() == unknown.json()


async def test_a_doctor_and_a_patient_search_only_their_own(client, login, demo):
    doctor, patient = await login("doctor1"), await login("patient2")
    theirs = entries(resource_of(await client.get("/fhir/Appointment?_count=200", headers=doctor.headers)))
    assert theirs and {p["actor"]["reference"] for r in theirs for p in r["participant"][1:2]} == {
        f"Practitioner/{demo.users['doctor1']}"
    }
    own = entries(resource_of(await client.get("/fhir/Appointment?_count=200", headers=patient.headers)))
    assert own and {r["participant"][0]["actor"]["reference"] for r in own} == {f"Patient/{demo.patients['patient2']}"}
    # Asking for someone else's finds nothing, it does not fail differently.
    other = f"/fhir/Appointment?patient=Patient/{demo.patients['patient1']}"
    assert entries(resource_of(await client.get(other, headers=patient.headers))) == []


async def test_a_write_only_key_sees_only_the_requests_its_account_made(client, login, demo):
    admin = await login("admin")
    writer = await make_key(client, admin.headers, name="portal", scopes=["appointments:write"])
    made = await client.post("/integration/v1/appointment-requests", headers=writer.headers, json=request_body(demo))
    assert made.status_code == 201, made.text
    found = entries(resource_of(await client.get("/fhir/Appointment", headers=writer.headers)))
    assert [r["id"] for r in found] == [str(made.json()["id"])]
    assert_outcome(
        await client.get(f"/fhir/Appointment/{aid(demo, REQUESTED)}", headers=writer.headers), 404, "NOT_FOUND"
    )


async def test_search_by_practitioner_and_date_range_with_ge_and_lt(client, key, demo):
    d1 = demo.users["doctor1"]
    url = f"/fhir/Appointment?practitioner=Practitioner/{d1}&date=ge2026-11-25&date=lt2026-11-26T00:00:00%2B01:00"
    found = entries(resource_of(await client.get(url, headers=key.headers)))
    assert found
    for r in found:
        assert r["start"].startswith("2026-11-25") and r["participant"][1]["actor"]["reference"] == f"Practitioner/{d1}"
    everything = entries(resource_of(await client.get("/fhir/Appointment?_count=200", headers=key.headers)))
    expected = [
        r["id"]
        for r in everything
        if r["participant"][1]["actor"]["reference"] == f"Practitioner/{d1}" and r["start"].startswith("2026-11-25")
    ]
    assert [r["id"] for r in found] == expected


async def test_search_by_status_patient_and_location(client, key, demo):
    p1, berlin = demo.patients["patient1"], demo.locations["berlin"]
    url = f"/fhir/Appointment?status=cancelled&patient={p1}&location=Location/{berlin}&_count=200"
    found = entries(resource_of(await client.get(url, headers=key.headers)))
    ids = {r["id"] for r in found}
    assert str(aid(demo, DECLINED)) in ids
    for r in found:
        assert r["status"] == "cancelled" and r["participant"][0]["actor"]["reference"] == f"Patient/{p1}"
        assert r["participant"][2]["actor"]["reference"] == f"Location/{berlin}"
    pending = entries(resource_of(await client.get("/fhir/Appointment?status=pending,booked", headers=key.headers)))
    assert {r["status"] for r in pending} == {"pending", "booked"}
    assert str(aid(demo, PENDING_5)) in {r["id"] for r in pending}
    assert str(aid(demo, CANCELED)) not in {r["id"] for r in pending}


async def test_sort_by_descending_date(client, key):
    found = entries(resource_of(await client.get("/fhir/Appointment?_sort=-date&_count=200", headers=key.headers)))
    starts = [(r["start"], int(r["id"])) for r in found]
    assert len(starts) > 5
    keys = [(datetime.fromisoformat(s), i) for s, i in starts]
    assert keys == sorted(keys, reverse=True)


async def test_unknown_parameters_are_ignored_with_a_warning_unless_strict(client, key):
    lenient = resource_of(await client.get("/fhir/Appointment?foo=1&status=booked", headers=key.headers))
    (warning,) = entries(lenient, "outcome")
    assert warning["issue"][0]["severity"] == "warning" and warning["issue"][0]["expression"] == ["foo"]
    assert {r["status"] for r in entries(lenient)} == {"booked"}
    strict = await client.get("/fhir/Appointment?foo=1", headers={**key.headers, "Prefer": "handling=strict"})
    assert_outcome(strict, 400, "NOT_SUPPORTED", expression="Appointment.foo")


@pytest.mark.parametrize(
    "query",
    [
        "date=2026-13-01",
        "date=xx2026-11-25",
        "date=2026-11-25T10:00",
        "status=maybe",
        "practitioner=Patient/1",
        "_count=-1",
        "_count=abc",
        "_sort=date&_cursor=AAAA",
        "_cursor=AAAA",
        "_format=xml",
    ],
)
async def test_bad_search_values_are_refused_with_an_operation_outcome(client, key, query):
    response = await client.get(f"/fhir/Appointment?{query}", headers=key.headers)
    assert response.status_code in (400, 406)
    assert response.json()["resourceType"] == "OperationOutcome"
    resource_of(response, response.status_code)


async def test_paging_is_stable_while_appointments_are_inserted(client, key, demo, runtime):
    everything = resource_of(await client.get("/fhir/Appointment?_count=200", headers=key.headers))
    before = {r["id"] for r in entries(everything)}
    first = resource_of(await client.get("/fhir/Appointment?_count=3&_sort=date", headers=key.headers))
    seen = [r["id"] for r in entries(first)]
    link = next_link(first)
    inserted = 0
    template = await _row(runtime, aid(demo, APPROVED))
    while link is not None:
        # New appointments land before and after the page's position while the client walks.
        async with runtime.db.transaction() as s:
            for delta in (-timedelta(days=400), timedelta(days=400)):
                s.add(Appointment(**{**template, "start_at": template["start_at"] + delta}))
                inserted += 1
        page = resource_of(await client.get(link.removeprefix("http://testserver"), headers=key.headers))
        seen.extend(r["id"] for r in entries(page))
        link = next_link(page)
    assert len(seen) == len(set(seen))
    assert before <= set(seen)
    assert inserted > 0


async def _row(runtime, appointment_id):
    async with runtime.db.read() as s:
        a = await s.get(Appointment, appointment_id)
    keep = ("patient_id", "doctor_id", "location_id", "service", "start_at", "duration_minutes", "status")
    return {**{k: getattr(a, k) for k in keep}, "version": 1, "created_at": a.created_at, "updated_at": a.updated_at}


async def test_include_adds_the_pages_participants_once_each(client, login, demo):
    doctor = await login("doctor1")
    url = (
        "/fhir/Appointment?_count=5&_include=Appointment:patient&_include=Appointment:practitioner"
        "&_include=Appointment:location"
    )
    page = resource_of(await client.get(url, headers=doctor.headers))
    shown = entries(page)
    included = {(r["resourceType"], r["id"]) for r in entries(page, "include")}
    referenced = {tuple(p["actor"]["reference"].split("/")) for r in shown for p in r["participant"]}
    assert included == referenced and len(entries(page, "include")) == len(included)
    assert "_include=Appointment%3Apatient" in (next_link(page) or "")


async def test_an_unsupported_include_is_refused(client, key):
    response = await client.get("/fhir/Appointment?_include=Appointment:slot", headers=key.headers)
    assert_outcome(response, 400, "NOT_SUPPORTED", expression="Appointment._include")
