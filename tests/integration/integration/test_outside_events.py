"""Outside events on an appointment through the integration API: each follows the state rules, goes through the
one transition (history, audit, event) and reaches the doctor (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from doctordesk.domain.events import doctor_topic
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.support.integration import make_key
from tests.support.review import (
    APPROVED,
    CANCELED,
    COMPLETED,
    PENDING_5,
    REQUESTED,
    Events,
    aid,
    approve_url,
    find,
    snapshot,
)


def url(a: int, event: str) -> str:
    return f"/integration/v1/appointments/{a}/{event}"


@pytest.fixture
async def key(client, login):
    admin = await login("admin")
    return await make_key(client, admin.headers)


async def last_history(runtime, a: int) -> AppointmentHistory:
    async with runtime.db.read() as s:
        return (
            await s.scalars(
                select(AppointmentHistory)
                .where(AppointmentHistory.appointment_id == a)
                .order_by(AppointmentHistory.id.desc())
                .limit(1)
            )
        ).one()


def appointment_events(events: Events) -> list:
    return [e for e in events.seen if e.kind.startswith("appointment.")]


async def test_a_cancellation_by_the_patient_cancels_and_notifies_the_doctor(client, key, demo, runtime):
    events = Events(runtime)
    a = aid(demo, APPROVED)
    response = await client.post(
        url(a, "cancel"), headers=key.headers, json={"by": "patient", "reason": "Feeling better"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == {"code": 4, "name": "canceled"} and response.json()["version"] == 2
    entry = await last_history(runtime, a)
    assert (entry.from_status, entry.to_status, entry.actor_id) == (2, 4, None)
    assert entry.details["by"] == "patient" and entry.details["reason"] == "Feeling better"
    assert entry.details["service_account"]["id"] == key.account_id
    async with runtime.db.read() as s:
        audit = (await s.scalars(select(AuditLog).where(AuditLog.action == "appointment.cancel"))).one()
    assert audit.actor_id is None and audit.entity_id == a
    (event,) = appointment_events(events)
    assert event.kind == "appointment.cancel" and doctor_topic(demo.users["doctor1"]) in event.topics
    assert event.notify_user_ids == (demo.users["doctor1"],) and "Feeling better" in (event.notify_text or "")
    assert set(event.data) == {"appointment_id", "from_status", "status", "version", "start", "when", "canceled_by"}
    assert event.data["canceled_by"] == "patient"  # who canceled reaches the webhooks, the reason does not


async def test_a_cancellation_by_the_clinic_notifies_the_doctor_and_the_patient(client, key, demo, runtime):
    events = Events(runtime)
    a = aid(demo, APPROVED)
    response = await client.post(url(a, "cancel"), headers=key.headers, json={"by": "clinic", "reason": "Flooding"})
    assert response.status_code == 200
    (event,) = appointment_events(events)
    assert set(event.notify_user_ids) == {demo.users["doctor1"], demo.users["patient4"]}


async def test_canceling_a_pending_appointment_withdraws_its_offers(client, key, demo, runtime):
    a = aid(demo, PENDING_5)
    response = await client.post(url(a, "cancel"), headers=key.headers, json={"by": "patient", "reason": "Moved"})
    assert response.status_code == 200
    async with runtime.db.read() as s:
        states = set(
            (await s.scalars(select(AppointmentOffer.state).where(AppointmentOffer.appointment_id == a))).all()
        )
    assert states == {"withdrawn"}


@pytest.mark.parametrize(
    ("index", "event", "body"),
    [
        (CANCELED, "cancel", {"by": "patient", "reason": "Again"}),
        (COMPLETED, "cancel", {"by": "clinic", "reason": "Late"}),
        (CANCELED, "reschedule-request", {"start": "2026-11-26T11:00:00+01:00"}),
        (REQUESTED, "complete", {}),
        (REQUESTED, "no-show", {}),
        (CANCELED, "complete", {}),
        (PENDING_5, "no-show", {}),
    ],
)
async def test_an_event_the_status_does_not_allow_is_refused_and_changes_nothing(
    client, key, demo, runtime, index, event, body
):
    a = aid(demo, index)
    before = await snapshot(runtime, a)
    response = await client.post(url(a, event), headers=key.headers, json=body)
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "INVALID_TRANSITION"
    assert await snapshot(runtime, a) == before


async def test_after_an_outside_cancellation_the_doctors_decisions_are_disabled_and_refused(client, key, login, demo):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    canceled = await client.post(url(a, "cancel"), headers=key.headers, json={"by": "patient", "reason": "No time"})
    version = canceled.json()["version"]
    page = (await client.put(approve_url(a), headers=doctor.headers)).json()
    assert find(page["elements"], "approve")["enabled"] is False
    refused = await client.post(approve_url(a), headers=doctor.headers, data={"version": str(version)})
    assert refused.status_code == 409 and refused.json()["code"] == "INVALID_TRANSITION"


async def test_an_approved_appointment_is_completed_only_once_its_time_has_come(client, key, demo, runtime, clock):
    events = Events(runtime)
    a = aid(demo, APPROVED)
    early = await client.post(url(a, "complete"), headers=key.headers, json={})
    assert early.status_code == 409 and "not started" in early.json()["message"]
    async with runtime.db.read() as s:
        start = (await s.get(Appointment, a)).start_at
    clock.at = start + timedelta(minutes=40)
    done = await client.post(url(a, "complete"), headers=key.headers, json={})
    assert done.status_code == 200 and done.json()["status"] == {"code": 6, "name": "completed"}
    assert [e.kind for e in appointment_events(events)] == ["appointment.complete"]
    assert appointment_events(events)[0].notify_user_ids == ()
    again = await client.post(url(a, "no-show"), headers=key.headers, json={})
    assert again.status_code == 409


async def test_a_no_show_has_its_own_status_and_is_final(client, key, login, demo, runtime, clock):
    a = aid(demo, APPROVED)
    clock.at = datetime(2026, 11, 24, 15, 31, tzinfo=UTC)  # after the 16:00-16:30 (Berlin) visit
    response = await client.post(url(a, "no-show"), headers=key.headers, json={})
    assert response.status_code == 200 and response.json()["status"] == {"code": 7, "name": "no-show"}
    doctor = await login("doctor1")
    listed = (await client.get("/api/appointments?status=no-show", headers=doctor.headers)).json()["appointments"]
    assert [x["id"] for x in listed] == [a]
    refused = await client.post(url(a, "cancel"), headers=key.headers, json={"by": "clinic", "reason": "x"})
    assert refused.status_code == 409


async def test_a_reschedule_request_puts_the_appointment_back_for_review_at_the_new_time(
    client, key, login, demo, runtime
):
    events = Events(runtime)
    a = aid(demo, APPROVED)
    async with runtime.db.read() as s:
        old_start = (await s.get(Appointment, a)).start_at
    response = await client.post(
        url(a, "reschedule-request"), headers=key.headers, json={"start": "2026-11-26T11:00:00+01:00", "note": "Later"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"]["name"] == "requested" and body["start"] == "2026-11-26T11:00:00+01:00"
    entry = await last_history(runtime, a)
    assert (entry.from_status, entry.to_status) == (2, 1)
    assert entry.details["previous"] == {"status": 2, "start": old_start.isoformat()}
    (event,) = appointment_events(events)
    assert event.kind == "appointment.reschedule-request" and event.notify_user_ids == (demo.users["doctor1"],)
    # The doctor reviews it again.
    doctor = await login("doctor1")
    page = (await client.put(approve_url(a), headers=doctor.headers)).json()
    assert find(page["elements"], "approve").get("enabled", True) is True


async def test_a_reschedule_request_follows_the_scheduling_rules(client, key, demo, runtime):
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    for start in ("2026-11-24T16:00:00+01:00", "2026-11-26T07:00:00+01:00", "2026-11-23T08:30:00+01:00"):
        response = await client.post(url(a, "reschedule-request"), headers=key.headers, json={"start": start})
        assert response.status_code == 422 and "start" in response.json()["fields"], start
    assert await snapshot(runtime, a) == before


async def test_a_reschedule_request_on_a_pending_appointment_withdraws_the_offers(client, key, demo, runtime):
    a = aid(demo, PENDING_5)
    response = await client.post(
        url(a, "reschedule-request"), headers=key.headers, json={"start": "2026-11-26T15:00:00+01:00"}
    )
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        states = set(
            (await s.scalars(select(AppointmentOffer.state).where(AppointmentOffer.appointment_id == a))).all()
        )
    assert states == {"withdrawn"}


async def test_a_stale_version_is_refused_with_appointment_changed(client, key, demo, runtime):
    a = aid(demo, APPROVED)
    before = await snapshot(runtime, a)
    response = await client.post(
        url(a, "cancel"), headers=key.headers, json={"by": "patient", "reason": "x", "version": 5}
    )
    assert response.status_code == 409 and response.json()["code"] == "APPOINTMENT_CHANGED"
    assert await snapshot(runtime, a) == before


@pytest.mark.parametrize(
    ("event", "body", "field"),
    [
        ("cancel", {"by": "patient"}, "reason"),
        ("cancel", {"by": "patient", "reason": "   "}, "reason"),
        ("cancel", {"by": "doctor", "reason": "x"}, "by"),
        ("cancel", {"by": "patient", "reason": "x" * 1001}, "reason"),
        ("cancel", {"by": "patient", "reason": "x", "refund": True}, "refund"),
        ("complete", {"outcome": "fine"}, "outcome"),
        ("no-show", {"version": 0}, "version"),
        ("reschedule-request", {}, "start"),
        ("reschedule-request", {"start": "2026-11-26 11:00"}, "start"),
    ],
)
async def test_bad_event_input_is_refused_naming_the_field(client, key, demo, runtime, event, body, field):
    a = aid(demo, APPROVED)
    before = await snapshot(runtime, a)
    response = await client.post(url(a, event), headers=key.headers, json=body)
    assert response.status_code == 422, response.text
    assert field in response.json()["fields"]
    assert await snapshot(runtime, a) == before


async def test_an_event_on_an_unknown_appointment_is_not_found(client, key):
    for a in ("99999999", "0", "abc"):
        response = await client.post(url(a, "complete"), headers=key.headers, json={})  # type: ignore[arg-type]
        assert response.status_code in (404, 422) and response.json()["kind"] == "error"
