"""Chained parameters on Appointment (docs/fhir.md#chained-parameters): every chain the CapabilityStatement lists
finds the known appointment with a value its participant matches and leaves it out with one it does not; the
target's modifiers, the typed form, ANDed chains; a chain matches only what the caller may read; deeper chains and
unknown targets are ignored with a warning, or refused under ``Prefer: handling=strict`` (SQLite and
PostgreSQL)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import update

from doctordesk.services.fhir import people as fhir_people
from doctordesk.services.fhir.capability import CHAIN_DOCUMENTATION
from doctordesk.store.tables import Patient, User
from tests.support.fhir import assert_outcome, entries, resource_of
from tests.support.integration import make_key
from tests.support.review import CANCELED, REQUESTED, aid

# The known appointment (demo.appointments[REQUESTED]): Dr. Berger, Berlin Mitte Clinic, Maria Schmidt (born
# 1984-03-02).


@pytest.fixture
async def key(client, login, runtime, demo):
    async with runtime.db.transaction() as s:
        await s.execute(update(Patient).where(Patient.id == demo.patients["patient1"]).values(external_id="mrn-1"))
        await s.execute(update(User).where(User.id == demo.users["doctor1"]).values(external_id="prac-1"))
    return await make_key(client, (await login("admin")).headers)


async def found(client, headers, query, *, warnings=False):
    bundle = resource_of(await client.get(f"/fhir/Appointment?{query}&_count=200", headers=headers))
    if not warnings:
        assert not entries(bundle, "outcome"), bundle  # nothing was ignored
    return {r["id"] for r in entries(bundle)}


def chain_table(demo):
    p1, p2 = demo.patients["patient1"], demo.patients["patient2"]
    d1, d2 = demo.users["doctor1"], demo.users["doctor2"]
    berlin, munich = demo.locations["berlin"], demo.locations["munich"]
    return {
        "patient._id": (f"{p1}", f"{p2}"),
        "patient.identifier": ("urn:doctordesk:patient-external-id|mrn-1", "mrn-2"),
        "patient.name": ("maria schm", "weber"),
        "patient.family": ("SCHMIDT", "maria"),
        "patient.given": ("mar", "schmidt"),
        "patient.birthdate": ("1984-03-02", "lt1984"),
        "practitioner._id": (f"{d1}", f"{d2}"),
        "practitioner.identifier": ("prac-1", "prac-2"),
        "practitioner.name": ("berger", "romero"),
        "location._id": (f"{berlin}", f"{munich}"),
        "location.name": ("berlin mitte", "munich"),
    }


async def test_every_listed_chain_finds_the_known_appointment_and_a_filter_excludes_it(client, key, demo):
    statement = resource_of(await client.get("/fhir/metadata"))
    [appointment] = [r for r in statement["rest"][0]["resource"] if r["type"] == "Appointment"]
    listed = set()
    for param in appointment["searchParam"]:
        if "documentation" in param:
            listed |= set(param["documentation"].removeprefix(CHAIN_DOCUMENTATION).split(", "))
    table = chain_table(demo)
    assert listed == set(table)
    known = str(aid(demo, REQUESTED))
    for name, (finds, misses) in table.items():
        assert known in await found(client, key.headers, f"{name}={finds}"), name
        assert known not in await found(client, key.headers, f"{name}={misses}"), name


@pytest.mark.parametrize("chain_ids", [0, 500])  # the patients as a subquery, or as their ids
async def test_a_chain_finds_exactly_what_the_reference_search_finds(client, key, demo, monkeypatch, chain_ids):
    monkeypatch.setattr(fhir_people, "CHAIN_IDS", chain_ids)
    p1, p2, d1 = demo.patients["patient1"], demo.patients["patient2"], demo.users["doctor1"]
    assert await found(client, key.headers, f"patient._id={p1},{p2}") == await found(
        client, key.headers, f"patient={p1},{p2}"
    )
    assert await found(client, key.headers, "patient.name=schmidt") == await found(
        client, key.headers, f"patient=Patient/{p1}"
    )
    assert await found(client, key.headers, "practitioner.name=berger") == await found(
        client, key.headers, f"practitioner={d1}"
    )


@pytest.mark.parametrize(
    ("query", "hit"),
    [
        ("patient.name:exact=Maria Schmidt", True),
        ("patient.name:exact=maria schmidt", False),
        ("patient.identifier:not=mrn-1", False),
        ("patient.identifier:missing=false", True),
        ("patient.birthdate=ge1984-01-01&patient.birthdate=lt1985", True),
        ("patient.given:missing=true", False),
        ("patient.name=weber,schmidt", True),
        ("patient.name=maria&practitioner.name=romero", False),
        ("patient.name=maria&location.name:exact=Berlin Mitte Clinic", True),
        ("practitioner.name:exact=nobody", False),
        ("patient:Patient.name=schmidt", True),
        ("practitioner:Practitioner.identifier=prac-1", True),
    ],
)
async def test_chains_take_the_targets_modifiers_and_the_typed_form(client, key, demo, query, hit):
    assert (str(aid(demo, REQUESTED)) in await found(client, key.headers, query)) is hit


async def test_the_typed_form_reads_as_the_plain_chain_in_the_self_link(client, key):
    bundle = resource_of(await client.get("/fhir/Appointment?patient:Patient.family=schmidt", headers=key.headers))
    [url] = [link["url"] for link in bundle["link"] if link["relation"] == "self"]
    assert parse_qs(urlsplit(url).query)["patient.family"] == ["schmidt"]


async def test_a_chain_counts_and_sorts_like_any_filter(client, key, demo):
    url = "/fhir/Appointment?patient.family=schmidt&_sort=-date&_count=2&_total=accurate"
    first = resource_of(await client.get(url, headers=key.headers))
    everything = await found(client, key.headers, f"patient=Patient/{demo.patients['patient1']}")
    assert first["total"] == len(everything)
    starts = [r["start"] for r in entries(first)]
    assert starts == sorted(starts, reverse=True)


async def test_a_chain_finds_only_what_the_caller_may_see(client, key, login, demo):
    known = str(aid(demo, REQUESTED))
    other = await login("patient2")
    assert await found(client, other.headers, "patient.name=schmidt") == set()
    mine = await login("patient1")
    assert known in await found(client, mine.headers, "patient.name=schmidt")
    doctor2 = await login("doctor2")
    own = await found(client, doctor2.headers, "patient.family=schmidt")
    assert known not in own
    assert own <= await found(client, doctor2.headers, f"practitioner={demo.users['doctor2']}")


@pytest.mark.parametrize(
    "name",
    [
        "patient.organization.name",  # deeper than one level
        "patient.colour",  # not a Patient parameter here
        "service-type.code",  # not a reference
        "actor.name",  # a chain on actor is not offered
        "patient:Practitioner.name",  # the wrong type
        "patient.name:contains",  # a modifier the target does not take
    ],
)
async def test_an_unsupported_chain_is_ignored_with_a_warning_or_refused_when_strict(client, key, demo, name):
    lenient = resource_of(await client.get(f"/fhir/Appointment?{name}=x&_count=200", headers=key.headers))
    [warning] = entries(lenient, "outcome")
    assert warning["issue"][0]["severity"] == "warning" and warning["issue"][0]["expression"] == [name]
    assert str(aid(demo, CANCELED)) in {r["id"] for r in entries(lenient)}  # not applied
    strict = await client.get(f"/fhir/Appointment?{name}=x", headers={**key.headers, "Prefer": "handling=strict"})
    assert_outcome(strict, 400, "NOT_SUPPORTED", expression=f"Appointment.{name}")


async def test_a_bad_value_in_a_chain_is_refused(client, key):
    for query, name in (
        ("patient.birthdate=yesterday", "patient.birthdate"),
        ("patient.identifier:missing=maybe", "patient.identifier:missing"),
        ("practitioner.identifier=other|prac-1", "practitioner.identifier"),
    ):
        response = await client.get(f"/fhir/Appointment?{query}", headers=key.headers)
        assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression=f"Appointment.{name}")
