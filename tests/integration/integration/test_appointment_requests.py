"""Appointment requests through the integration API: idempotency, the screens' scheduling rules, bad input, the
event the doctor's list and push get (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from doctordesk.domain.events import doctor_topic
from doctordesk.store.integration_tables import IdempotencyRecord, IntegrationRequest
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.support.integration import FREE_START, make_key, request_body
from tests.support.review import Events

URL = "/integration/v1/appointment-requests"


async def rows(runtime, table) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(table)) or 0)


async def written(runtime) -> tuple[int, ...]:
    return tuple([await rows(runtime, t) for t in (Appointment, AppointmentHistory, AuditLog, IdempotencyRecord)])


@pytest.fixture
async def key(client, login):
    admin = await login("admin")
    return await make_key(client, admin.headers)


async def test_a_request_creates_a_requested_appointment_with_history_audit_and_the_event(client, key, demo, runtime):
    events = Events(runtime)
    response = await client.post(URL, headers=key.headers, json=request_body(demo))
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["status"] == {"code": 1, "name": "requested"}
    assert body["start"] == FREE_START and body["note"] == "Back pain since Monday"
    assert body["service_account"] == key.account_id and body["version"] == 1
    async with runtime.db.read() as s:
        history = (
            await s.scalars(select(AppointmentHistory).where(AppointmentHistory.appointment_id == body["id"]))
        ).all()
        audit = (await s.scalars(select(AuditLog).where(AuditLog.action == "appointment.request"))).one()
        origin = await s.get(IntegrationRequest, body["id"])
    (entry,) = history
    assert (entry.from_status, entry.to_status, entry.actor_id) == (None, 1, None)
    assert entry.details["service_account"]["id"] == key.account_id
    assert audit.actor_id is None and audit.details["service_account"]["key_id"] == key.key_id
    assert origin.service_account_id == key.account_id
    (event,) = [e for e in events.seen if e.kind.startswith("appointment.")]
    assert event.kind == "appointment.request"
    assert set(event.data) == {"appointment_id", "from_status", "status", "version", "start", "when"}
    assert event.data["from_status"] is None and event.data["status"] == 1
    assert doctor_topic(demo.users["doctor1"]) in event.topics
    assert event.notify_user_ids == (demo.users["doctor1"],) and "Maria Schmidt" in (event.notify_text or "")


async def test_the_new_request_shows_in_the_doctors_list(client, key, demo, login):
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    created = (await client.post(URL, headers=key.headers, json=request_body(demo))).json()
    poll = await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert f"appointment-{created['id']}" in poll.text


async def test_the_same_idempotency_key_and_body_return_the_first_result_and_write_once(client, key, demo, runtime):
    headers = {**key.headers, "Idempotency-Key": "order-77"}
    first = await client.post(URL, headers=headers, json=request_body(demo))
    before = await written(runtime)
    # The same meaning in another key order is the same body.
    again = await client.post(URL, headers=headers, json=dict(reversed(list(request_body(demo).items()))))
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert await written(runtime) == before


async def test_the_same_idempotency_key_with_another_body_is_refused(client, key, demo, runtime):
    headers = {**key.headers, "Idempotency-Key": "order-78"}
    assert (await client.post(URL, headers=headers, json=request_body(demo))).status_code == 201
    before = await written(runtime)
    other = await client.post(URL, headers=headers, json=request_body(demo, note="Another note"))
    assert other.status_code == 409
    assert other.json()["code"] == "IDEMPOTENCY_KEY_REUSED" and other.json()["kind"] == "error"
    assert await written(runtime) == before


async def test_idempotency_keys_belong_to_one_service_account(client, login, key, demo):
    admin = await login("admin")
    other = await make_key(client, admin.headers, name="portal")
    first = await client.post(URL, headers={**key.headers, "Idempotency-Key": "k"}, json=request_body(demo))
    later = request_body(demo, start="2026-11-26T12:00:00+01:00")
    second = await client.post(URL, headers={**other.headers, "Idempotency-Key": "k"}, json=later)
    assert first.status_code == second.status_code == 201 and first.json()["id"] != second.json()["id"]


async def test_an_idempotency_key_is_forgotten_after_24_hours(client, key, demo, clock):
    headers = {**key.headers, "Idempotency-Key": "daily"}
    first = await client.post(URL, headers=headers, json=request_body(demo))
    clock.advance(timedelta(hours=24, seconds=1))
    later = await client.post(URL, headers=headers, json=request_body(demo, start="2026-11-27T11:00:00+01:00"))
    assert later.status_code == 201 and later.json()["id"] != first.json()["id"]


async def test_concurrent_requests_with_one_idempotency_key_create_one_appointment(client, key, demo, runtime):
    before = await rows(runtime, Appointment)
    headers = {**key.headers, "Idempotency-Key": "burst"}
    answers = await asyncio.gather(*[client.post(URL, headers=headers, json=request_body(demo)) for _ in range(6)])
    assert {a.status_code for a in answers} == {201}, [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    assert await rows(runtime, Appointment) == before + 1
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 5


async def test_a_refused_request_stores_no_idempotency_key(client, key, demo, runtime):
    headers = {**key.headers, "Idempotency-Key": "fix-and-retry"}
    refused = await client.post(URL, headers=headers, json=request_body(demo, start="2026-11-26T19:00:00+01:00"))
    assert refused.status_code == 422
    assert await rows(runtime, IdempotencyRecord) == 0
    assert (await client.post(URL, headers=headers, json=request_body(demo))).status_code == 201


@pytest.mark.parametrize(
    ("start", "message"),
    [
        ("2026-11-23T09:30:00+01:00", "at least 2 hours from now"),  # lead time: 1.5 hours ahead
        ("2026-11-26T17:00:00+01:00", "work hours"),  # Dr. Berger's Berlin hours end at 17:00
        ("2026-11-28T10:00:00+01:00", "work hours"),  # a Saturday
        ("2026-11-24T16:15:00+01:00", "Overlaps an approved appointment"),  # the demo's approved 16:00-16:30
    ],
)
async def test_a_request_breaking_a_scheduling_rule_is_refused_with_the_screens_code(
    client, key, demo, runtime, start, message
):
    before = await written(runtime)
    response = await client.post(URL, headers=key.headers, json=request_body(demo, start=start))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and message in body["fields"]["start"]
    assert await written(runtime) == before


async def test_requests_do_not_block_each_other_only_approved_times_and_open_offers_do(client, key, demo):
    first = await client.post(URL, headers=key.headers, json=request_body(demo))
    second = await client.post(URL, headers=key.headers, json=request_body(demo, patient=demo.patients["patient4"]))
    assert first.status_code == second.status_code == 201


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"color": "red"}, "color"),
        ({"start": "2026-11-26T11:00:00"}, "start"),  # no offset
        ({"start": "2026-11-26T11:00:30+01:00"}, "start"),
        ({"start": "tomorrow"}, "start"),
        ({"start": None}, "start"),
        ({"patient": 0}, "patient"),
        ({"patient": 2**60}, "patient"),
        ({"patient": "one"}, "patient"),
        ({"patient": 999_999}, "patient"),
        ({"doctor": 999_999}, "doctor"),
        ({"location": 999_999}, "location"),
        ({"service": ""}, "service"),
        ({"service": "x" * 65}, "service"),
        ({"note": "x" * 2001}, "note"),
        ({"duration_minutes": 0}, "duration_minutes"),
        ({"duration_minutes": 481}, "duration_minutes"),
    ],
)
async def test_bad_input_is_refused_naming_the_field_and_writes_nothing(client, key, demo, runtime, change, field):
    before = await written(runtime)
    response = await client.post(URL, headers=key.headers, json=request_body(demo, **change))
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "FIELDS_VALIDATION_ERROR" and field in response.json()["fields"]
    assert await written(runtime) == before


async def test_a_doctor_is_requested_only_where_they_work(client, key, demo):
    # Dr. Chen works in London (and Berlin on Wednesdays), never in Munich.
    body = request_body(demo, doctor=demo.users["doctor3"], location=demo.locations["munich"])
    response = await client.post(URL, headers=key.headers, json=body)
    assert response.status_code == 422 and "location" in response.json()["fields"]


@pytest.mark.parametrize(
    "raw", [b"{", b"[]", b'"text"', b"null", b'{"patient": 1, "patient": 2, "extra": true}', "é".encode("latin-1")]
)
async def test_malformed_bodies_are_refused_without_a_server_error(client, key, runtime, raw):
    before = await written(runtime)
    response = await client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=raw)
    assert response.status_code == 422 and response.json()["code"] == "FIELDS_VALIDATION_ERROR"
    assert await written(runtime) == before


async def test_a_malformed_idempotency_key_is_refused(client, key, demo, runtime):
    before = await written(runtime)
    response = await client.post(URL, headers={**key.headers, "Idempotency-Key": "x" * 129}, json=request_body(demo))
    assert response.status_code == 422 and "Idempotency-Key" in response.json()["fields"]
    assert await written(runtime) == before


async def test_a_read_key_reads_any_appointment_a_write_key_only_its_own(client, login, key, demo):
    admin = await login("admin")
    writer = await make_key(client, admin.headers, name="writer", scopes=["appointments:write"])
    reader = await make_key(client, admin.headers, name="reader", scopes=["appointments:read"])
    mine = (await client.post(URL, headers=writer.headers, json=request_body(demo))).json()
    others = await client.post(URL, headers=key.headers, json=request_body(demo, start="2026-11-26T14:00:00+01:00"))
    seeded = demo.appointments[0]
    assert (await client.get(f"/integration/v1/appointments/{mine['id']}", headers=writer.headers)).json() == mine
    for a in (seeded, others.json()["id"]):
        assert (await client.get(f"/integration/v1/appointments/{a}", headers=writer.headers)).status_code == 404
        assert (await client.get(f"/integration/v1/appointments/{a}", headers=reader.headers)).status_code == 200
    assert (await client.get("/integration/v1/appointments/99999999", headers=reader.headers)).status_code == 404


async def test_the_answer_to_a_request_is_the_appointment_as_read_back(client, key, demo):
    # A time sent in UTC is answered in the location's zone, an empty note as the empty note stored.
    utc = request_body(demo, start="2026-11-26T13:30:00Z", note="")
    created = await client.post(URL, headers={**key.headers, "Idempotency-Key": "read-back"}, json=utc)
    assert created.status_code == 201, created.text
    read = await client.get(f"/integration/v1/appointments/{created.json()['id']}", headers=key.headers)
    assert created.json() == read.json()
    assert created.json()["start"] == "2026-11-26T14:30:00+01:00" and created.json()["note"] == ""
