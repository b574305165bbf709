"""``GET /fhir/Patient/{id}/$everything`` (docs/fhir.md#everything): the patient, their appointments page by page
(``_count``, ``next`` links), the offers and answers of those appointments and the doctors and locations they name;
``_since`` and ``_type``; the same rights as reading the patient and searching their appointments; every page a
valid R4 Bundle (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from doctordesk.store.tables import Appointment, Patient
from tests.support.fhir import assert_outcome, entries, next_link, resource_of
from tests.support.integration import make_key

LATER = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
EVERY_RELATED = (
    "_revinclude=AppointmentResponse:appointment&_include=Appointment:practitioner&_include=Appointment:location"
)


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def pages(client, headers, url):
    """Every page of ``url``, through its next links, each validated."""
    out = [resource_of(await client.get(url, headers=headers))]
    while (link := next_link(out[-1])) is not None:
        assert "$everything" in link
        out.append(resource_of(await client.get(link.removeprefix("http://testserver"), headers=headers)))
    return out


def of_type(bundles, kind):
    return [e["resource"] for b in bundles for e in b.get("entry", []) if e["resource"]["resourceType"] == kind]


async def expected(client, headers, patient_id):
    """What the searches give the same caller: the patient's appointments with their participants and answers."""
    bundle = resource_of(
        await client.get(f"/fhir/Appointment?patient={patient_id}&{EVERY_RELATED}&_count=200", headers=headers)
    )
    included = entries(bundle, "include")
    return {
        "Appointment": [r["id"] for r in entries(bundle)],
        **{
            kind: sorted(r["id"] for r in included if r["resourceType"] == kind)
            for kind in ("AppointmentResponse", "Practitioner", "Location")
        },
    }


@pytest.mark.parametrize("who", ["key", "patient1", "doctor1", "admin"])
async def test_everything_pages_the_patients_appointments_with_what_they_name(client, key, login, demo, who):
    headers = key.headers if who == "key" else (await login(who)).headers
    p1 = demo.patients["patient1"]
    bundles = await pages(client, headers, f"/fhir/Patient/{p1}/$everything?_count=2")
    want = await expected(client, headers, p1)
    assert len(want["Appointment"]) > 2 and len(bundles) > 1  # paged
    assert all(b["type"] == "searchset" for b in bundles)
    first = bundles[0]["entry"][0]
    assert first["resource"]["resourceType"] == "Patient" and first["resource"]["id"] == str(p1)
    assert [r["id"] for r in of_type(bundles, "Patient")] == [str(p1)]  # once, on the first page
    assert [r["id"] for r in of_type(bundles, "Appointment")] == want["Appointment"]  # start order, none twice
    for kind in ("AppointmentResponse", "Practitioner", "Location"):
        assert sorted(r["id"] for r in of_type(bundles, kind)) == want[kind], kind
    assert all(len([e for e in b["entry"] if e["resource"]["resourceType"] == "Appointment"]) <= 2 for b in bundles)


async def test_a_doctor_sees_only_their_own_appointments_of_the_patient(client, login, demo):
    p1 = demo.patients["patient1"]
    doctor = await login("doctor1")
    bundles = await pages(client, doctor.headers, f"/fhir/Patient/{p1}/$everything?_count=200")
    doctors = {a["participant"][1]["actor"]["reference"] for a in of_type(bundles, "Appointment")}
    assert doctors == {f"Practitioner/{demo.users['doctor1']}"}
    assert [r["id"] for r in of_type(bundles, "Practitioner")] == [str(demo.users["doctor1"])]


async def test_others_get_404_as_for_reading_the_patient(client, key, login, demo, runtime):
    p1 = demo.patients["patient1"]
    other = await login("patient2")
    assert_outcome(await client.get(f"/fhir/Patient/{p1}/$everything", headers=other.headers), 404, "NOT_FOUND")
    for missing in ("999999", "abc"):
        response = await client.get(f"/fhir/Patient/{missing}/$everything", headers=key.headers)
        assert_outcome(response, 404, "NOT_FOUND")
    assert (await client.get(f"/fhir/Patient/{p1}/$everything")).status_code == 401
    async with runtime.db.transaction() as session:
        newcomer = Patient(name="Nora Neu")
        session.add(newcomer)
        await session.flush()
        new_id = newcomer.id
    for name in ("doctor1", "doctor2"):
        doctor = await login(name)
        response = await client.get(f"/fhir/Patient/{new_id}/$everything", headers=doctor.headers)
        assert_outcome(response, 404, "NOT_FOUND")  # no appointment together: not their patient
    alone = resource_of(await client.get(f"/fhir/Patient/{new_id}/$everything", headers=key.headers))
    assert [e["resource"]["resourceType"] for e in alone["entry"]] == ["Patient"]


async def test_since_keeps_the_appointments_changed_since(client, key, runtime, demo):
    p1 = demo.patients["patient1"]
    want = await expected(client, key.headers, p1)
    changed = want["Appointment"][1]
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == int(changed)).values(updated_at=LATER))
        await s.execute(
            update(Appointment)
            .where(Appointment.patient_id == p1, Appointment.id != int(changed))
            .values(updated_at=datetime(2026, 11, 1, tzinfo=UTC))
        )
    bundles = await pages(client, key.headers, f"/fhir/Patient/{p1}/$everything?_since=2026-11-27T11:00:00Z")
    assert [r["id"] for r in of_type(bundles, "Appointment")] == [changed]
    assert [r["id"] for r in of_type(bundles, "Patient")] == [str(p1)]  # the patient always
    assert len(of_type(bundles, "Practitioner")) == 1 and len(of_type(bundles, "Location")) == 1
    for bad in ("gt2026-11-27", "yesterday", "2026-11-27T11:00:00"):
        response = await client.get(f"/fhir/Patient/{p1}/$everything?_since={bad}", headers=key.headers)
        assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Patient._since")


@pytest.mark.parametrize(
    ("types", "kinds"),
    [
        ("Appointment", {"Appointment"}),
        ("Patient,Practitioner", {"Patient", "Practitioner"}),
        ("Location&_type=Patient", {"Location", "Patient"}),
        ("AppointmentResponse", {"AppointmentResponse"}),
    ],
)
async def test_type_keeps_only_the_types_named(client, key, demo, types, kinds):
    p1 = demo.patients["patient1"]
    bundles = await pages(client, key.headers, f"/fhir/Patient/{p1}/$everything?_type={types}&_count=2")
    shown = {e["resource"]["resourceType"] for b in bundles for e in b.get("entry", [])}
    assert shown == kinds
    want = await expected(client, key.headers, p1)
    for kind in kinds - {"Patient"}:
        assert sorted(r["id"] for r in of_type(bundles, kind)) == sorted(want[kind]), kind


async def test_an_unknown_type_or_parameter_is_a_warning_or_refused_when_strict(client, key, demo):
    p1 = demo.patients["patient1"]
    url = f"/fhir/Patient/{p1}/$everything?_type=Appointment,Slot&start=2026-01-01"
    lenient = resource_of(await client.get(url, headers=key.headers))
    [outcome] = entries(lenient, "outcome")
    assert sorted(i["expression"][0] for i in outcome["issue"]) == ["_type", "start"]
    [self_link] = [link["url"] for link in lenient["link"] if link["relation"] == "self"]
    assert "Slot" not in self_link and "start" not in self_link and "_type=Appointment" in self_link
    assert {e["resource"]["resourceType"] for e in lenient["entry"]} == {"Appointment", "OperationOutcome"}
    strict = {**key.headers, "Prefer": "handling=strict"}
    for query in ("_type=Slot", "start=2026-01-01", "_sort=date"):
        response = await client.get(f"/fhir/Patient/{p1}/$everything?{query}", headers=strict)
        assert_outcome(response, 400, "NOT_SUPPORTED")


async def test_a_page_link_is_bound_to_its_search(client, key, demo):
    p1 = demo.patients["patient1"]
    first = resource_of(await client.get(f"/fhir/Patient/{p1}/$everything?_count=1", headers=key.headers))
    link = next_link(first)
    assert link is not None and "_cursor=" in link
    response = await client.get(f"/fhir/Patient/{p1}/$everything?_cursor=not-a-cursor", headers=key.headers)
    assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Patient._cursor")


async def test_count_zero_answers_no_entries(client, key, demo):
    p1 = demo.patients["patient1"]
    bundle = resource_of(await client.get(f"/fhir/Patient/{p1}/$everything?_count=0", headers=key.headers))
    assert "entry" not in bundle and next_link(bundle) is None
