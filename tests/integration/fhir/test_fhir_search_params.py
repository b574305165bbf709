"""Search never claims a filter it did not apply (docs/fhir.md#search-and-paging): every search parameter the
CapabilityStatement lists finds a known resource with a value that matches it and leaves it out with one that
does not; modifiers, the eight date prefixes, totals, ``_elements``; unknown parameters and modifiers are left
out of the self link and named in a warning (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlsplit

import pytest
from sqlalchemy import update

from doctordesk.store.tables import Appointment, Patient, User
from tests.integration.fhir.test_fhir_create import post, request
from tests.support.fhir import entries, resource_of
from tests.support.fhir_subscriptions import send, subscriber_key, subscription
from tests.support.integration import make_key
from tests.support.review import CANCELED, PENDING_5, PENDING_9, REQUESTED, aid

CONVERSATION = 2  # demo.appointments[2] has a chat thread (tests/integration/fhir/test_fhir_chat.py)
# The known appointment (demo.appointments[REQUESTED]): Dr. Berger, Berlin, Maria Schmidt, 25 Nov 2026 08:00 UTC.
EXTERNAL = "urn:doctordesk:appointment-external-id"
UPDATED = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


@dataclass
class Case:
    """A search of ``resource`` with one parameter: ``finds`` must include the known resource ``known``,
    ``misses`` must leave it out."""

    resource: str
    param: str
    known: str
    finds: str
    misses: str
    who: str = "key"


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


@pytest.fixture
async def known(client, login, demo, runtime):
    """External ids and a last-updated time on the known rows, and the ids of a slot, an offer, a message, a
    subscription and an audit event to find."""
    a = aid(demo, REQUESTED)
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a).values(external_id="ext-a", updated_at=UPDATED))
        await s.execute(update(Patient).where(Patient.id == demo.patients["patient1"]).values(external_id="mrn-1"))
        await s.execute(update(User).where(User.id == demo.users["doctor1"]).values(external_id="prac-1"))
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    slots = resource_of(
        await client.get(
            f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&start=ge2026-11-30&start=lt2026-12-05", headers=key.headers
        )
    )
    offers = resource_of(
        await client.get(
            f"/fhir/AppointmentResponse?appointment=Appointment/{aid(demo, PENDING_5)}", headers=key.headers
        )
    )
    chat = resource_of(
        await client.get(
            f"/fhir/Communication?about=Appointment/{demo.appointments[CONVERSATION]}", headers=admin.headers
        )
    )
    subscriber = await subscriber_key(client, admin.headers)
    made = await send(client, subscriber.headers, subscription())
    assert made.status_code == 201, made.text
    created = resource_of(await post(client, key.headers, request(demo)), 201)
    audit = resource_of(await client.get(f"/fhir/AuditEvent?entity=Appointment/{created['id']}", headers=admin.headers))
    return {
        "appointment": str(a),
        "slot": entries(slots)[0],
        "offer": entries(offers)[0],
        "message": entries(chat)[0]["id"],
        "subscription": made.json()["id"],
        "audit": entries(audit)[0]["id"],
        "created": created["id"],
        "headers": {"key": key.headers, "admin": admin.headers, "subscriber": subscriber.headers},
    }


def cases(demo, known) -> list[Case]:
    a = known["appointment"]
    other = str(aid(demo, CANCELED))
    p1, p2 = demo.patients["patient1"], demo.patients["patient2"]
    d1, d2 = demo.users["doctor1"], demo.users["doctor2"]
    berlin, munich = demo.locations["berlin"], demo.locations["munich"]
    slot, offer = known["slot"], known["offer"]
    schedule = slot["schedule"]["reference"].removeprefix("Schedule/")
    window = "start=ge2026-11-30&start=lt2026-12-05"
    not_it = f"start=ne{slot['start'][:16]}{slot['start'][19:]}".replace("+", "%2B")  # its minute
    answers = f"appointment=Appointment/{aid(demo, PENDING_5)}"
    conversation = demo.appointments[CONVERSATION]
    created = known["created"]
    return [
        Case("Appointment", "_id", a, f"_id={a}", f"_id={other}"),
        Case("Appointment", "_lastUpdated", a, "_lastUpdated=2026-11-20", "_lastUpdated=ne2026-11-20"),
        Case("Appointment", "identifier", a, f"identifier={EXTERNAL}|ext-a", "identifier=ext-b"),
        Case("Appointment", "date", a, "date=2026-11-25", "date=2026-11-26"),
        Case("Appointment", "status", a, "status=proposed", "status=booked"),
        Case("Appointment", "service-type", a, "service-type=consultation", "service-type=teledermatology"),
        Case("Appointment", "actor", a, f"actor=Patient/{p1}", f"actor=Patient/{p2}"),
        Case("Appointment", "patient", a, f"patient=Patient/{p1}", f"patient={p2}"),
        Case("Appointment", "practitioner", a, f"practitioner=Practitioner/{d1}", f"practitioner={d2}"),
        Case("Appointment", "location", a, f"location=Location/{berlin}", f"location={munich}"),
        Case("Patient", "_id", str(p1), f"_id={p1}", f"_id={p2}"),
        Case("Patient", "identifier", str(p1), "identifier=mrn-1", "identifier=mrn-2"),
        Case("Patient", "name", str(p1), "name=schm", "name=weber"),
        Case("Patient", "family", str(p1), "family=SCHMIDT", "family=maria"),
        Case("Patient", "given", str(p1), "given=mar", "given=schmidt"),
        Case("Patient", "birthdate", str(p1), "birthdate=1984-03-02", "birthdate=1979"),
        Case("Practitioner", "_id", str(d1), f"_id={d1}", f"_id={d2}"),
        Case("Practitioner", "identifier", str(d1), "identifier=prac-1", "identifier=prac-2"),
        Case("Practitioner", "name", str(d1), "name=berger", "name=romero"),
        Case("Location", "_id", str(berlin), f"_id={berlin}", f"_id={munich}"),
        Case("Group", "_id", str(d1), f"_id={d1}", f"_id={d2}", who="admin"),  # a doctor's patient panel
        Case("Location", "name", str(berlin), "name=BERL", "name=munich"),
        Case("PractitionerRole", "practitioner", f"{d1}-{berlin}", f"practitioner={d1}", f"practitioner={d2}"),
        Case("PractitionerRole", "location", f"{d1}-{berlin}", f"location={berlin}", f"location={munich}"),
        Case("Schedule", "actor", f"{d1}-{berlin}", f"actor=Practitioner/{d1}", f"actor=Practitioner/{d2}"),
        Case("Slot", "schedule", slot["id"], f"schedule=Schedule/{schedule}&{window}",
             f"schedule=Schedule/{d2}-{berlin}&{window}"),
        Case("Slot", "start", slot["id"], f"schedule=Schedule/{schedule}&{window}",
             f"schedule=Schedule/{schedule}&{window}&{not_it}"),
        Case("Slot", "status", slot["id"], f"schedule=Schedule/{schedule}&{window}&status=free",
             f"schedule=Schedule/{schedule}&{window}&status=busy"),
        Case("AppointmentResponse", "appointment", offer["id"], answers,
             f"appointment=Appointment/{aid(demo, PENDING_9)}"),
        Case("AppointmentResponse", "actor", offer["id"], f"{answers}&actor={offer['actor']['reference']}",
             f"{answers}&actor=Patient/{p1}"),
        Case("Communication", "about", known["message"], f"about=Appointment/{conversation}",
             f"about=Appointment/{a}", who="admin"),
        Case("Subscription", "status", known["subscription"], "status=active", "status=off", who="subscriber"),
        Case("AuditEvent", "date", known["audit"], f"entity=Appointment/{created}&date=ge2000",
             f"entity=Appointment/{created}&date=lt2000", who="admin"),
        Case("AuditEvent", "entity", known["audit"], f"entity=Appointment/{created}", f"entity=Appointment/{a}",
             who="admin"),
        Case("AuditEvent", "subtype", known["audit"], f"entity=Appointment/{created}&subtype=appointment.request",
             f"entity=Appointment/{created}&subtype=appointment.approve", who="admin"),
    ]  # fmt: skip


async def ids(client, headers, resource, query):
    bundle = resource_of(await client.get(f"/fhir/{resource}?{query}&_count=200", headers=headers))
    assert not entries(bundle, "outcome"), bundle  # nothing was ignored
    return {r["id"] for r in entries(bundle)}


async def test_every_listed_parameter_finds_the_known_resource_and_a_filter_excludes_it(client, demo, known):
    statement = resource_of(await client.get("/fhir/metadata"))
    listed = {(r["type"], p["name"]) for r in statement["rest"][0]["resource"] for p in r.get("searchParam", [])}
    table = cases(demo, known)
    assert {(c.resource, c.param) for c in table} == listed
    for case in table:
        headers = known["headers"][case.who]
        assert case.known in await ids(client, headers, case.resource, case.finds), case
        assert case.known not in await ids(client, headers, case.resource, case.misses), case


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("status:not=proposed", False),
        ("status:not=booked,pending", True),
        ("identifier:not=ext-a", False),
        ("identifier:missing=true", False),
        ("identifier:missing=false", True),
        ("date:missing=true", False),
        ("service-type:not=consultation", False),
        ("service-type=urn:doctordesk:service|consultation", True),
        ("actor=Location/{berlin},Patient/{p2}", True),
        ("actor=Patient/{p1}&actor=Practitioner/{d2}", False),
        ("status=proposed&status=booked", False),
        ("date=eq2026-11-25", True),
        ("date=ne2026-11-25", False),
        ("date=ne2026-11-26", True),
        ("date=gt2026-11-24", True),
        ("date=gt2026-11-25", False),
        ("date=ge2026-11-25T08:00:00Z", True),
        ("date=lt2026-11-25T09:00:00%2B01:00", False),
        ("date=lt2026-11-25T08:01Z", True),
        ("date=le2026-11-24", False),
        ("date=sa2026-11-24", True),
        ("date=sa2026-11-25", False),
        ("date=eb2026-11-26", True),
        ("date=eb2026-11-25", False),
        ("date=ap2026-11-25", True),
        ("date=ap2027-06-01", False),
        ("_lastUpdated=ge2026-11-21", False),
        ("_lastUpdated=lt2026-11-21", True),
    ],
)
async def test_appointment_modifiers_and_date_prefixes_filter(client, demo, known, query, found):
    values = {"berlin": demo.locations["berlin"], "p1": demo.patients["patient1"], "p2": demo.patients["patient2"],
              "d2": demo.users["doctor2"]}  # fmt: skip
    seen = await ids(client, known["headers"]["key"], "Appointment", query.format(**values))
    assert (known["appointment"] in seen) == found


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("name:exact=Maria Schmidt", True),
        ("name:exact=maria schmidt", False),
        ("family:exact=Schmidt", True),
        ("family:exact=Schmid", False),
        ("given:exact=Maria", True),
        ("given:missing=true", False),
        ("name=maria schm", True),
        ("name=maria weber", False),
        ("name=weber,schmidt", True),
        ("identifier:not=mrn-1", False),
        ("identifier:missing=false", True),
        ("birthdate=ge1984-03-02", True),
        ("birthdate=gt1984-03-02", False),
        ("birthdate=ne1984-03", False),
        ("birthdate=eb1985", True),
        ("birthdate=sa1984", False),
        ("birthdate:missing=true", False),
    ],
)
async def test_patient_string_and_date_searches_filter(client, demo, known, query, found):
    seen = await ids(client, known["headers"]["key"], "Patient", query)
    assert (str(demo.patients["patient1"]) in seen) == found


async def test_family_and_given_read_the_name_text(client, demo, known):
    found = resource_of(await client.get(f"/fhir/Patient/{demo.patients['patient1']}", headers=known["headers"]["key"]))
    assert found["name"] == [{"text": "Maria Schmidt", "family": "Schmidt", "given": ["Maria"]}]
    assert found["identifier"] == [{"system": "urn:doctordesk:patient-external-id", "value": "mrn-1"}]


async def test_unknown_parameters_and_modifiers_are_left_out_of_the_self_link_and_named(client, known):
    headers = known["headers"]["key"]
    bundle = resource_of(
        await client.get("/fhir/Appointment?status=proposed&colour=red&status:below=x&date:exact=2026", headers=headers)
    )
    (self_link,) = [link["url"] for link in bundle["link"] if link["relation"] == "self"]
    assert parse_qsl(urlsplit(self_link).query) == [("status", "proposed")]
    (warning,) = entries(bundle, "outcome")
    named = [i["expression"][0] for i in warning["issue"]]
    assert named == ["colour", "status:below", "date:exact"]
    assert {i["severity"] for i in warning["issue"]} == {"warning"}
    assert {r["status"] for r in entries(bundle)} == {"proposed"}
    strict = await client.get("/fhir/Appointment?status:below=x", headers={**headers, "Prefer": "handling=strict"})
    assert strict.status_code == 400
    resource_of(strict, 400)


async def test_totals_count_the_matches_and_summary_count_sends_only_the_total(client, known):
    headers = known["headers"]["key"]
    every = await ids(client, headers, "Appointment", "status=proposed")
    counted = resource_of(
        await client.get("/fhir/Appointment?status=proposed&_total=accurate&_count=2", headers=headers)
    )
    assert counted["total"] == len(every) and len(entries(counted)) == 2
    only = resource_of(await client.get("/fhir/Appointment?status=proposed&_summary=count", headers=headers))
    assert only["total"] == len(every) and "entry" not in only
    plain = resource_of(await client.get("/fhir/Appointment?status=proposed", headers=headers))
    assert "total" not in plain
    patients = resource_of(await client.get("/fhir/Patient?family=schmidt&_summary=count", headers=headers))
    assert patients["total"] == 1
    doctors = resource_of(await client.get("/fhir/Practitioner?_total=accurate", headers=headers))
    assert doctors["total"] == len(entries(doctors)) >= 3
    assert (await client.get("/fhir/Appointment?_summary=text", headers=headers)).status_code == 400
    assert (await client.get("/fhir/Appointment?_total=some", headers=headers)).status_code == 400


async def test_elements_keeps_the_named_and_mandatory_elements_marked_subsetted(client, known):
    headers = known["headers"]["key"]
    bundle = resource_of(
        await client.get(f"/fhir/Appointment?_id={known['appointment']}&_elements=start", headers=headers)
    )
    (found,) = entries(bundle)
    assert set(found) == {"resourceType", "id", "meta", "start", "status", "participant"}
    assert found["meta"]["tag"][0]["code"] == "SUBSETTED"


async def test_revinclude_adds_the_offers_and_answers_of_the_page(client, demo, known):
    headers = known["headers"]["key"]
    a = aid(demo, PENDING_5)
    url = f"/fhir/Appointment?_id={a}&_revinclude=AppointmentResponse:appointment"
    bundle = resource_of(await client.get(url, headers=headers))
    included = entries(bundle, "include")
    direct = entries(
        resource_of(await client.get(f"/fhir/AppointmentResponse?appointment=Appointment/{a}", headers=headers))
    )
    assert included == direct and len(included) > 0
    refused = await client.get("/fhir/Appointment?_revinclude=Communication:about", headers=headers)
    assert refused.status_code == 400
