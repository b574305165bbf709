"""The FHIR interface through an independent client (fhirpy, from PyPI) against a real server: search with filters
and modifiers, paging, counting, vread and history, a request placed and found again; every resource the client
reads is validated against the R4 models."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fhirpy import SyncFHIRClient

from tests.support.fhir_models import validate
from tests.support.live import LiveServer, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("fhirpy")) as live:
        yield live


@pytest.fixture(scope="module")
def fhir(server: LiveServer) -> SyncFHIRClient:
    with httpx.Client(base_url=server.url) as http:
        login = http.post("/auth/login", data={"username": "admin", "password": "demo"})
        admin = {"Authorization": f"Bearer {login.json()['access_token']}"}
        account = http.post("/admin/service-accounts", headers=admin, json={"name": "fhirpy"}).json()["id"]
        key = http.post(
            f"/admin/service-accounts/{account}/keys",
            headers=admin,
            json={"scopes": ["appointments:read", "appointments:write"]},
        ).json()["key"]
    return SyncFHIRClient(f"{server.url}/fhir", authorization=f"Bearer {key}")


def checked(resource: Any) -> dict[str, Any]:
    body: dict[str, Any] = resource.serialize()
    validate(body)
    return body


def test_search_filters_pages_and_counts_through_fhirpy(fhir: SyncFHIRClient) -> None:
    [maria] = [checked(p) for p in fhir.resources("Patient").search(family="schmidt").fetch()]
    assert maria["name"][0]["family"] == "Schmidt"
    assert all(checked(p)["id"] != maria["id"] for p in fhir.resources("Patient").search(family__exact="schmidt"))
    mine = fhir.resources("Appointment").search(patient=f"Patient/{maria['id']}")
    every = [checked(a) for a in mine.limit(200).fetch()]
    paged = [checked(a) for a in mine.limit(2).fetch_all()]  # follows the next links
    assert [a["id"] for a in paged] == [a["id"] for a in every] and len(every) > 2
    assert mine.count() == len(every)
    assert all(a["participant"][0]["actor"]["reference"] == f"Patient/{maria['id']}" for a in every)
    one = every[0]["id"]
    assert [a["id"] for a in fhir.resources("Appointment").search(_id=one).fetch()] == [one]
    others = fhir.resources("Appointment").search(patient=f"Patient/{maria['id']}", status__not="proposed")
    assert {checked(a)["status"] for a in others.limit(200).fetch()} <= {
        "pending",
        "booked",
        "cancelled",
        "fulfilled",
        "noshow",
    }


def test_chained_and_sorted_searches_through_fhirpy(fhir: SyncFHIRClient) -> None:
    [maria] = [checked(p) for p in fhir.resources("Patient").search(family="schmidt").fetch()]
    by_reference = {checked(a)["id"] for a in fhir.resources("Appointment").search(patient=maria["id"]).fetch_all()}
    assert len(by_reference) > 2
    chained = fhir.resources("Appointment").search(patient__family="schmidt")  # patient.family=schmidt
    assert {checked(a)["id"] for a in chained.limit(2).fetch_all()} == by_reference
    typed = fhir.resources("Appointment").search(patient__Patient__name="maria")  # patient:Patient.name=maria
    assert {checked(a)["id"] for a in typed.fetch_all()} == by_reference
    assert fhir.resources("Appointment").search(patient__family="nobody-of-that-name").fetch() == []
    newest = [checked(a) for a in chained.sort("-date", "_id").limit(2).fetch_all()]  # _sort=-date,_id, paged
    starts = [datetime.fromisoformat(a["start"]) for a in newest]
    assert [a["id"] for a in newest] == [
        a["id"] for a in sorted(newest, key=lambda a: (-datetime.fromisoformat(a["start"]).timestamp(), int(a["id"])))
    ]
    assert len(newest) == len(by_reference) and starts[0] >= starts[-1]
    places = [checked(p)["name"] for p in fhir.resources("Location").sort("-name").limit(1).fetch_all()]
    assert places == sorted(places, key=str.casefold, reverse=True) and len(places) >= 2
    berger = fhir.resources("Appointment").search(practitioner__name="berger", location__name="berlin")
    found = [checked(r) for r in berger.fetch_all()]
    assert found and all(a["participant"][1]["actor"]["display"].endswith("Berger") for a in found)
    assert all(a["participant"][2]["actor"]["display"].startswith("Berlin") for a in found)


def test_a_request_is_placed_read_again_by_version_and_found(fhir: SyncFHIRClient) -> None:
    berger = fhir.resources("Practitioner").search(name="berger").fetch()[0]
    [schedule] = fhir.resources("Schedule").search(actor=f"Practitioner/{berger['id']}").fetch()[:1]
    today = datetime.now(UTC).date()
    slots = fhir.resources("Slot").search(
        schedule=f"Schedule/{schedule['id']}", start__ge=str(today + timedelta(days=2)),
        start__lt=str(today + timedelta(days=9)), status="free",
    ).fetch()  # fmt: skip
    slot = checked(slots[-1])
    patient = fhir.resources("Patient").search(family="schmidt").fetch()[0]
    location = schedule["actor"][1]["reference"]
    appointment = fhir.resource(
        "Appointment",
        status="proposed",
        start=slot["start"],
        minutesDuration=30,
        identifier=[{"system": "urn:doctordesk:appointment-external-id", "value": "fhirpy-1"}],
        participant=[
            {"actor": {"reference": f"Patient/{patient['id']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{berger['id']}"}, "status": "needs-action"},
            {"actor": {"reference": location}, "status": "needs-action"},
        ],
    )
    appointment.save()
    created = checked(appointment)
    assert created["status"] == "proposed" and created["meta"]["versionId"] == "1"
    first = fhir.execute(f"Appointment/{created['id']}/_history/1", method="get")
    validate(first)
    assert first["id"] == created["id"] and first["requestedPeriod"][0]["start"] == slot["start"]
    history = fhir.execute(f"Appointment/{created['id']}/_history", method="get")
    validate(history)
    assert history["type"] == "history" and [e["resource"]["meta"]["versionId"] for e in history["entry"]] == ["1"]
    found = fhir.resources("Appointment").search(identifier="fhirpy-1").fetch()
    assert [checked(a)["id"] for a in found] == [created["id"]]
    assert fhir.resources("Appointment").search(identifier="fhirpy-2").fetch() == []


def test_find_hold_book_then_the_doctors_decision_and_the_history(server: LiveServer, fhir: SyncFHIRClient) -> None:
    """Argonaut's patient-based flow through fhirpy: a free time found, held (busy-tentative for others), booked,
    approved by the doctor on Review and Approve, seen by searching, and read back in the history."""
    berger = fhir.resources("Practitioner").search(name="berger").fetch()[0]
    patient = fhir.resources("Patient").search(family="schmidt").fetch()[0]
    today = datetime.now(UTC).date()
    found = fhir.execute(
        "Appointment/$find",
        method="get",
        params={
            "start": str(today + timedelta(days=10)),
            "end": str(today + timedelta(days=16)),
            "practitioner": f"Practitioner/{berger['id']}",
        },
    )
    validate(found)
    proposed = found["entry"][0]["resource"]
    assert proposed["status"] == "proposed" and found["total"] >= len(found["entry"]) > 0
    mine = {"actor": {"reference": f"Patient/{patient['id']}"}, "status": "accepted"}
    wanted = {**proposed, "participant": [mine, *proposed["participant"]]}

    def parameters(appointment: dict[str, Any]) -> dict[str, Any]:
        return {"resourceType": "Parameters", "parameter": [{"name": "appt-resource", "resource": appointment}]}

    held = fhir.execute("Appointment/$hold", method="post", data=parameters(wanted))
    validate(held)
    slot = proposed["slot"][0]["reference"]
    assert held["status"] == "pending" and checked(fhir.reference(reference=slot).to_resource())["status"] == (
        "busy-tentative"
    )
    booked = fhir.execute("Appointment/$book", method="post", data=parameters(held))
    validate(booked)
    appointment_id = booked["entry"][0]["resource"]["id"]
    with httpx.Client(base_url=server.url) as http:
        login = http.post("/auth/login", data={"username": "doctor1", "password": "demo"})
        doctor = {"Authorization": f"Bearer {login.json()['access_token']}"}
        approved = http.post(f"/profile/appointments/{appointment_id}/approve", headers=doctor, data={"version": "1"})
        assert approved.status_code == 200, approved.text
    decided = fhir.resources("Appointment").search(_id=appointment_id, status="booked").fetch()
    assert [checked(a)["start"] for a in decided] == [proposed["start"]]
    assert checked(fhir.reference(reference=slot).to_resource())["status"] == "busy"
    history = fhir.execute(f"Appointment/{appointment_id}/_history", method="get")
    validate(history)
    assert [e["resource"]["status"] for e in history["entry"]][0] == "booked"
    assert history["entry"][-1]["resource"]["status"] == "proposed"
