"""Scheduling through FHIR after Argonaut Scheduling's patient-based flow: Slots free, busy and busy-tentative from
the booking screen's computation, ``Appointment/$find``, ``$hold`` (a time kept for its holder until it expires)
and ``$book`` (the request the booking screen and the integration API place: same checks, Review and Approve and
webhooks); concurrent bookings of one time end as one request (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from doctordesk.config import Settings
from doctordesk.services.fhir.holds import HOLD_MINUTES
from doctordesk.store.fhir_tables import SlotHold
from doctordesk.store.integration_tables import IntegrationRequest
from doctordesk.store.tables import Appointment, AuditLog, Patient
from doctordesk.store.webhook_tables import WebhookDelivery
from tests.support.fhir import FHIR_JSON, assert_outcome, entries, resource_of
from tests.support.fhir_models import validate
from tests.support.integration import FREE_START, make_key

DAY = "2026-11-26"
HOLD = "urn:doctordesk:fhir:hold"


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url, webhook_in_process=False, webhook_allow_private_addresses=True)


@pytest.fixture
async def admin(login):
    return await login("admin")


@pytest.fixture
async def key(client, admin):
    return await make_key(client, admin.headers)


@pytest.fixture
async def other_key(client, admin):
    return await make_key(client, admin.headers, name="another-platform")


def parameters(appointment: dict[str, Any]) -> dict[str, Any]:
    body = {"resourceType": "Parameters", "parameter": [{"name": "appt-resource", "resource": appointment}]}
    validate(body)
    return body


async def operation(client, headers, name: str, appointment: dict[str, Any]):
    return await client.post(
        f"/fhir/Appointment/${name}",
        content=json.dumps(parameters(appointment)),
        headers={**headers, "Content-Type": FHIR_JSON},
    )


def with_patient(proposed: dict[str, Any], patient_id: int) -> dict[str, Any]:
    patient = {"actor": {"reference": f"Patient/{patient_id}"}, "status": "accepted"}
    return {**proposed, "participant": [patient, *proposed["participant"]]}


async def find(client, headers, demo, day: str = DAY) -> list[dict[str, Any]]:
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    url = f"/fhir/Appointment/$find?start={day}&end={day}&practitioner=Practitioner/{d1}&location=Location/{berlin}"
    return entries(resource_of(await client.get(url, headers=headers)))


async def slot_status(client, headers, demo, start: str) -> str:
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    span = f"start=ge{DAY}&start=lt2026-11-27"
    found = entries(
        resource_of(await client.get(f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&{span}", headers=headers))
    )
    [status] = [s["status"] for s in found if s["start"] == start]
    return str(status)


async def requests_at(runtime, start: str) -> int:
    async with runtime.db.read() as s:
        at = datetime.fromisoformat(start)
        return int(await s.scalar(select(func.count()).where(Appointment.start_at == at)) or 0)


async def test_find_answers_the_free_slots_as_proposed_appointments(client, key, demo):
    found = await find(client, key.headers, demo)
    assert found and all(a["status"] == "proposed" and a["minutesDuration"] == 30 for a in found)
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    span = f"start=ge{DAY}&start=lt2026-11-27&status=free"
    slots = entries(
        resource_of(await client.get(f"/fhir/Slot?schedule=Schedule/{d1}-{berlin}&{span}", headers=key.headers))
    )
    assert [a["start"] for a in found] == [s["start"] for s in slots]
    assert [a["slot"][0]["reference"] for a in found] == [f"Slot/{s['id']}" for s in slots]
    assert FREE_START in [a["start"] for a in found]
    everyone = resource_of(await client.get(f"/fhir/Appointment/$find?start={DAY}&end={DAY}", headers=key.headers))
    assert everyone["total"] > len(found)
    assert_outcome(
        await client.get("/fhir/Appointment/$find?start=2026-11-26", headers=key.headers),
        400,
        "FIELDS_VALIDATION_ERROR",
    )
    bad = await client.get(f"/fhir/Appointment/$find?start={DAY}&end={DAY}&colour=red", headers=key.headers)
    assert_outcome(bad, 400, "NOT_SUPPORTED")
    wide = await client.get("/fhir/Appointment/$find?start=2026-11-26&end=2027-01-30", headers=key.headers)
    assert_outcome(wide, 400, "FIELDS_VALIDATION_ERROR")


async def test_find_without_a_range_answers_the_next_free_times_so_a_saturday_call_finds_mondays(
    client, key, demo, clock
):
    """With neither start nor end, ``$find`` looks from the first free time on (up to the horizon), not
    in a window already over; the range it applied is in the self link. One end alone is still 400."""
    clock.at = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)  # Saturday 10:00 in Berlin
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    who = f"practitioner=Practitioner/{d1}&location=Location/{berlin}"
    found = resource_of(await client.get(f"/fhir/Appointment/$find?{who}&_count=200", headers=key.headers))
    starts = [a["start"] for a in entries(found)]
    assert starts and starts[0].startswith("2026-11-30T") and starts[0].endswith("+01:00")  # Monday, Berlin time
    mondays = [a["start"] for a in await find(client, key.headers, demo, "2026-11-30")]
    assert starts[: len(mondays)] == mondays  # Monday's free times first, exactly those of an asked Monday
    [self_link] = [link["url"] for link in found["link"] if link["relation"] == "self"]
    applied = parse_qs(urlsplit(self_link).query)
    first = datetime.fromisoformat(starts[0]).astimezone(UTC)
    assert applied["start"] == [first.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert applied["end"] == [(first + timedelta(days=30, seconds=-1)).strftime("%Y-%m-%dT%H:%M:%SZ")]
    again = resource_of(await client.get(self_link.replace("http://testserver", ""), headers=key.headers))
    assert again["total"] == found["total"]
    assert_outcome(
        await client.get(f"/fhir/Appointment/$find?{who}&end=2026-11-30", headers=key.headers),
        400,
        "FIELDS_VALIDATION_ERROR",
    )


async def test_a_hold_takes_the_time_for_others_until_it_expires(client, key, other_key, demo, clock):
    [wanted] = [a for a in await find(client, key.headers, demo) if a["start"] == FREE_START]
    me = with_patient(wanted, demo.patients["patient1"])
    held = resource_of(await operation(client, key.headers, "hold", me))
    assert held["status"] == "pending" and held["start"] == FREE_START
    assert [x["url"] for x in held["extension"]][0] == HOLD
    assert await slot_status(client, key.headers, demo, FREE_START) == "busy-tentative"
    assert FREE_START not in [a["start"] for a in await find(client, other_key.headers, demo)]
    them = with_patient(wanted, demo.patients["patient2"])
    assert_outcome(await operation(client, other_key.headers, "hold", them), 422, "FIELDS_VALIDATION_ERROR")
    assert_outcome(await operation(client, other_key.headers, "book", them), 422, "FIELDS_VALIDATION_ERROR")
    free = await client.get(
        "/integration/v1/free-times",
        headers=other_key.headers,
        params={"doctor": demo.users["doctor1"], "location": demo.locations["berlin"], "from": DAY, "to": DAY},
    )
    assert FREE_START not in [f["start"] for f in free.json()["free"]]
    clock.advance(timedelta(minutes=11))  # the hold has expired: the time is free for everyone again
    assert await slot_status(client, key.headers, demo, FREE_START) == "free"
    assert resource_of(await operation(client, other_key.headers, "hold", them))["status"] == "pending"


async def test_book_places_the_request_of_the_screens_and_the_doctor_decides(client, key, admin, demo, runtime, login):
    hook = await client.post(
        "/admin/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "event_types": ["appointment.requested", "appointment.approved"]},
        headers=admin.headers,
    )
    assert hook.status_code == 201, hook.text
    [wanted] = [a for a in await find(client, key.headers, demo) if a["start"] == FREE_START]
    held = resource_of(await operation(client, key.headers, "hold", with_patient(wanted, demo.patients["patient1"])))
    response = await operation(client, key.headers, "book", held)
    bundle = resource_of(response, 201)
    booked = bundle["entry"][0]["resource"]
    assert booked["status"] == "proposed" and booked["start"] == FREE_START
    assert response.headers["location"].endswith(f"/fhir/Appointment/{booked['id']}/_history/1")
    assert await slot_status(client, key.headers, demo, FREE_START) == "busy-tentative"  # while the doctor decides
    again = await operation(client, key.headers, "book", held)
    assert_outcome(again, 422, "FIELDS_VALIDATION_ERROR", expression="Appointment.extension")
    async with runtime.db.read() as s:
        action = await s.scalar(select(AuditLog.action).where(AuditLog.entity_id == int(booked["id"])).limit(1))
        origin = await s.scalar(
            select(IntegrationRequest.appointment_id).where(IntegrationRequest.appointment_id == int(booked["id"]))
        )
    assert action == "appointment.request" and origin == int(booked["id"])
    doctor = await login("doctor1")
    approved = await client.post(
        f"/profile/appointments/{booked['id']}/approve", headers=doctor.headers, data={"version": "1"}
    )
    assert approved.status_code == 200, approved.text
    read = resource_of(await client.get(f"/fhir/Appointment/{booked['id']}", headers=key.headers))
    assert read["status"] == "booked" and await slot_status(client, key.headers, demo, FREE_START) == "busy"
    async with runtime.db.read() as s:
        events = list(await s.scalars(select(WebhookDelivery.event_type).order_by(WebhookDelivery.id)))
    assert events == ["appointment.requested", "appointment.approved"]


async def test_a_patient_books_for_themself_only_and_a_hold_is_its_holders(client, key, demo, login):
    patient = await login("patient1")
    [wanted] = [a for a in await find(client, patient.headers, demo) if a["start"] == FREE_START]
    other = with_patient(wanted, demo.patients["patient2"])
    assert_outcome(await operation(client, patient.headers, "hold", other), 404, "NOT_FOUND")
    held = resource_of(
        await operation(client, patient.headers, "hold", with_patient(wanted, demo.patients["patient1"]))
    )
    stolen = {**held, "participant": other["participant"]}
    assert_outcome(await operation(client, key.headers, "book", stolen), 422, "FIELDS_VALIDATION_ERROR")
    doctor = await login("doctor1")
    assert_outcome(await operation(client, doctor.headers, "book", held), 403, "FORBIDDEN")
    booked = resource_of(await operation(client, patient.headers, "book", held), 201)["entry"][0]["resource"]
    assert booked["participant"][0]["actor"]["reference"] == f"Patient/{demo.patients['patient1']}"


async def test_concurrent_bookings_of_one_time_make_one_request(client, key, other_key, demo, runtime):
    [wanted] = [a for a in await find(client, key.headers, demo) if a["start"] == FREE_START]
    bodies = [with_patient(wanted, demo.patients[p]) for p in ("patient1", "patient2", "patient3")]
    before = await requests_at(runtime, FREE_START)
    answers = await asyncio.gather(*[operation(client, k.headers, "book", b) for k in (key, other_key) for b in bodies])
    assert sorted(a.status_code for a in answers) == [201, 422, 422, 422, 422, 422], [a.text for a in answers]
    assert await requests_at(runtime, FREE_START) == before + 1
    holds = await asyncio.gather(*[operation(client, k.headers, "hold", bodies[0]) for k in (key, other_key)])
    assert [h.status_code for h in holds] == [422, 422]  # the booked request keeps the time taken


async def test_a_holder_keeps_at_most_five_holds_and_the_capability_lists_the_operations(
    client, key, demo, clock, runtime
):
    found = await find(client, key.headers, demo)
    # Two patients each (a patient's own cap with one doctor in a week is two: test_fhir_holds.py).
    patients = [demo.patients[f"patient{n}"] for n in (1, 1, 2, 2, 3, 3)]
    held = [
        await operation(client, key.headers, "hold", with_patient(a, p))
        for a, p in zip(found[:6], patients, strict=True)
    ]
    assert [h.status_code for h in held] == [200] * 5 + [422]
    # All five expire, and their cool-down passes: a new hold clears them away.
    clock.advance(timedelta(minutes=HOLD_MINUTES + runtime.settings.hold_cooldown_minutes))
    assert (await operation(client, key.headers, "hold", with_patient(found[5], demo.patients["patient1"]))).is_success
    async with runtime.db.read() as s:
        rows = await s.scalar(select(func.count()).where(SlotHold.holder == f"account:{key.account_id}"))
    assert rows == 1
    capability = resource_of(await client.get("/fhir/metadata"))
    [appointment] = [r for r in capability["rest"][0]["resource"] if r["type"] == "Appointment"]
    assert [o["name"] for o in appointment["operation"]] == ["find", "hold", "book", "cancel"]
    [slot] = [r for r in capability["rest"][0]["resource"] if r["type"] == "Slot"]
    assert [p["name"] for p in slot["searchParam"]] == ["schedule", "start", "status"]


async def test_find_for_a_patient_answers_appointments_ready_to_book_for_them(client, login, demo):
    patient = await login("patient1")
    me = demo.patients["patient1"]
    d1, berlin = demo.users["doctor1"], demo.locations["berlin"]
    url = f"/fhir/Appointment/$find?start={DAY}&end={DAY}&practitioner={d1}&location={berlin}&patient=Patient/{me}"
    found = resource_of(await client.get(url, headers=patient.headers))
    assert f"patient=Patient%2F{me}" in found["link"][0]["url"]
    [wanted] = [e["resource"] for e in found["entry"] if e["resource"]["start"] == FREE_START]
    assert wanted["participant"][0]["actor"]["reference"] == f"Patient/{me}"
    assert [p["actor"]["reference"].split("/")[0] for p in wanted["participant"]] == [
        "Patient",
        "Practitioner",
        "Location",
    ]
    booked = resource_of(await operation(client, patient.headers, "book", wanted), 201)
    made = booked["entry"][0]["resource"]
    assert made["status"] == "proposed" and made["participant"][0]["actor"]["reference"] == f"Patient/{me}"


async def test_find_names_only_a_patient_the_caller_may_act_for(client, login, demo, key, runtime):
    async with runtime.db.transaction() as s:  # a patient no doctor has seen
        stranger = Patient(name="Nora Neu")
        s.add(stranger)
        await s.flush()
        stranger_id = stranger.id
    base = f"/fhir/Appointment/$find?start={DAY}&end={DAY}&patient="
    patient = await login("patient1")
    for other in (demo.patients["patient2"], 999999):  # another patient and nobody: alike
        assert_outcome(await client.get(f"{base}Patient/{other}", headers=patient.headers), 404, "NOT_FOUND")
    doctor = await login("doctor1")
    assert_outcome(await client.get(f"{base}Patient/{stranger_id}", headers=doctor.headers), 404, "NOT_FOUND")
    for headers in (key.headers, (await login("support1")).headers):
        found = resource_of(await client.get(f"{base}{stranger_id}", headers=headers))
        assert found["entry"][0]["resource"]["participant"][0]["actor"]["display"] == "Nora Neu"
    assert_outcome(await client.get(f"{base}999999", headers=key.headers), 404, "NOT_FOUND")
    bad = await client.get(f"{base}Practitioner/1", headers=key.headers)
    assert_outcome(bad, 400, "FIELDS_VALIDATION_ERROR", expression="Appointment.patient")
