"""Decisions on the Review and Approve screen, on SQLite and PostgreSQL: transitions, codes, history, audit, events,
and rejected requests that change nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import walk
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog, Patient
from tests.support.review import (
    APPROVED,
    CANCELED,
    CHEN_OUT_OF_NETWORK,
    COMPLETED,
    DISCLAIMER,
    EXCLUDED_DOCTOR,
    EXCLUDED_SERVICE,
    NOT_COVERED,
    PENDING_5,
    REQUESTED,
    THIRD_PARTY_INVALID,
    Events,
    aid,
    alternatives,
    approve_url,
    card,
    open_page,
    snapshot,
)


async def post(client, headers, appointment_id, **fields):
    return await client.post(approve_url(appointment_id), headers=headers, data=fields)


async def version_of(runtime, appointment_id) -> str:
    async with runtime.db.read() as s:
        a = await s.get(Appointment, appointment_id)
        return str(a.version)


async def test_approving_the_requested_time_approves_records_history_audit_and_notifies(client, login, demo, runtime):
    events = Events(runtime)
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    page = await open_page(client, doctor.headers, a)
    version = next(e for e in page["elements"] if e["id"] == "version")["value"]
    response = await post(client, doctor.headers, a, version=version)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["navigate"] == "/profile/appointments" and body["notice"]["text"] == "Appointment approved."
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        assert (row.status, row.version) == (Status.APPROVED, 2)
        history = (
            (await s.execute(select(AppointmentHistory).where(AppointmentHistory.appointment_id == a))).scalars().all()
        )
        last = history[-1]
        assert (last.actor_id, last.from_status, last.to_status) == (doctor.user["id"], 1, 2)
        assert last.at == datetime(2026, 11, 23, 7, 0, tzinfo=UTC) and last.details["action"] == "approve"
        audit = (
            (await s.execute(select(AuditLog).where(AuditLog.entity == "appointment", AuditLog.entity_id == a)))
            .scalars()
            .all()
        )
        assert [r.action for r in audit] == ["appointment.approve"]
        patient_user = await s.scalar(select(Patient.user_id).where(Patient.id == row.patient_id))
    assert events.kinds() == ["appointment.approve"]
    event = events.seen[-1]
    assert f"appointment:{a}" in event.topics and f"doctor:{doctor.user['id']}" in event.topics
    assert f"patient:{row.patient_id}" in event.topics and "appointments" in event.topics
    assert event.notify_user_ids == (patient_user,) and "approved" in (event.notify_text or "")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert f"status-{a}" in str(listing) and "upcoming" in str(listing)


async def test_valid_alternatives_all_in_network_give_status_5_and_open_offers(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    fields = alternatives(d1, berlin, ("2026-11-24", "10:00"), ("2026-11-26", "14:00"))
    response = await post(client, doctor.headers, a, **fields)
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        offers = (await s.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))).scalars().all()
    assert row.status == Status.PENDING_RESPONSE == 5
    assert [(o.n, o.state, o.start_at.hour) for o in sorted(offers, key=lambda o: o.n)] == [
        (1, "open", 9),
        (2, "open", 13),
    ]
    assert offers[0].doctor_fee_cents == 6000 and offers[0].total_fee_cents == 7500


async def test_an_out_of_network_alternative_gives_status_9(client, login, demo, runtime):
    doctor = await login("doctor3")
    a = aid(demo, CHEN_OUT_OF_NETWORK)
    fields = alternatives(demo.users["doctor3"], demo.locations["london"], ("2026-11-27", "11:00"))
    response = await post(client, doctor.headers, a, **fields)
    assert response.status_code == 200, response.text
    assert "out-of-network" in response.json()["notice"]["text"]
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        offer = await s.scalar(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))
    assert row.status == Status.PENDING_RESPONSE_COVERAGE_RISK == 9
    assert offer.coverage_warning and "Out of network" in offer.coverage_warning


async def test_an_alternative_equal_to_the_request_is_auto_approved(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    fields = alternatives(d1, berlin, ("2026-11-24", "10:00"), ("2026-11-25", "09:00"))  # the second: the request
    response = await post(client, doctor.headers, a, **fields)
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        offers = (await s.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))).all()
        history = await s.scalar(
            select(AppointmentHistory)
            .where(AppointmentHistory.appointment_id == a)
            .order_by(AppointmentHistory.id.desc())
        )
    assert row.status == Status.APPROVED and offers == []
    assert history.details["action"] == "auto-approve"


async def test_declining_records_the_reason(client, login, demo, runtime):
    events = Events(runtime)
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    response = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": " Fully booked ", "version": "1"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["navigate"] == "/profile/appointments"
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
    assert (row.status, row.decline_reason) == (Status.DECLINED, "Fully booked")
    assert events.kinds() == ["appointment.decline"] and "Fully booked" in events.seen[-1].notify_text


async def test_decline_without_a_reason_is_refused_naming_the_reason_field(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    response = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "  ", "version": "1"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and "reason" in body["fields"]
    assert await snapshot(runtime, a) == before


@pytest.mark.parametrize("index", [CANCELED, COMPLETED])
async def test_canceled_and_completed_are_final_actions_disabled_and_refused(client, login, demo, runtime, index):
    doctor = await login("doctor1")
    a = aid(demo, index)
    page = await open_page(client, doctor.headers, a)
    by_id = {e["id"]: e for e in page["elements"]}
    assert by_id["approve"]["enabled"] is False
    assert by_id["another-alternative"]["enabled"] is False
    assert by_id["decline"]["enabled"] is False
    before = await snapshot(runtime, a)
    for response in (
        await post(client, doctor.headers, a, version="1"),
        await client.post(
            f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "x", "version": "1"}
        ),
        await client.patch(approve_url(a) + "/add-alternative", headers=doctor.headers),
    ):
        assert response.status_code == 409 and response.json()["code"] == "INVALID_TRANSITION"
    assert await snapshot(runtime, a) == before


@pytest.mark.parametrize("index", [APPROVED, PENDING_5])
async def test_already_decided_appointments_are_not_decided_again(client, login, demo, runtime, index):
    doctor = await login("doctor1")
    response = await post(client, doctor.headers, aid(demo, index), version="1")
    assert response.status_code == 409 and response.json()["code"] == "INVALID_TRANSITION"


async def test_a_post_against_an_older_version_is_appointment_changed_and_changes_nothing(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    async with runtime.db.transaction() as s:
        row = await s.get(Appointment, a)
        row.version = 2  # changed elsewhere since the page was loaded
    before = await snapshot(runtime, a)
    response = await post(client, doctor.headers, a, version="1")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "APPOINTMENT_CHANGED" and body["reload"] is True
    assert await snapshot(runtime, a) == before


async def test_a_post_without_the_version_is_refused(client, login, demo):
    doctor = await login("doctor1")
    response = await post(client, doctor.headers, aid(demo, REQUESTED))
    assert response.status_code == 422 and "version" in response.json()["fields"]


@pytest.mark.parametrize("who", ["doctor2", "support1", "patient1", "admin"])
async def test_only_the_appointments_doctor_may_decide(client, login, demo, runtime, who):
    user = await login(who)
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    assert (await client.put(approve_url(a), headers=user.headers)).status_code == 404
    assert (await post(client, user.headers, a, version="1")).status_code == 404
    decline = await client.post(f"/profile/appointments/{a}/decline", headers=user.headers, data={"reason": "x"})
    assert decline.status_code in (404, 422)
    assert await snapshot(runtime, a) == before


async def test_without_a_token_every_endpoint_is_unauthorized(client, demo):
    a = aid(demo, REQUESTED)
    assert (await client.put(approve_url(a))).status_code == 401
    assert (await client.post(approve_url(a), data={"version": "1"})).status_code == 401


async def test_unknown_appointment_is_404(client, login, demo):
    doctor = await login("doctor1")
    assert (await client.put(approve_url(999999), headers=doctor.headers)).status_code == 404
    assert (await client.put(approve_url(2**60), headers=doctor.headers)).status_code == 422


async def test_a_date_outside_the_policy_period_is_not_covered(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, NOT_COVERED)
    before = await snapshot(runtime, a)
    response = await post(client, doctor.headers, a, version="1")
    assert response.status_code == 422 and response.json()["code"] == "APPOINTMENT_DATE_NOT_COVERED"
    fields = alternatives(demo.users["doctor1"], demo.locations["berlin"], ("2026-12-01", "10:00"))
    response = await post(client, doctor.headers, a, **fields)
    assert response.json()["code"] == "APPOINTMENT_DATE_NOT_COVERED" and "date~1" in response.json()["fields"]
    assert await snapshot(runtime, a) == before


async def test_an_excluded_service_is_forbidden_by_policy_terms(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, EXCLUDED_SERVICE)
    before = await snapshot(runtime, a)
    response = await post(client, doctor.headers, a, version="1")
    assert response.status_code == 422 and response.json()["code"] == "FORBIDDEN_DUE_TO_POLICY_TERMS"
    assert await snapshot(runtime, a) == before


async def test_an_excluded_doctor_profile_is_forbidden_naming_the_profile_field(client, login, demo, runtime):
    doctor = await login("doctor2")  # Sofia Rossi's policy excludes Dr. Romero
    a = aid(demo, EXCLUDED_DOCTOR)
    response = await post(client, doctor.headers, a, version="1")
    assert response.json()["code"] == "FORBIDDEN_DUE_TO_POLICY_TERMS"
    fields = {
        **card(1, demo.users["doctor2"], demo.locations["munich"], "2026-11-26", "10:00"),
        "version": "1",
        "timezone": "Europe/Berlin",
    }
    response = await post(client, doctor.headers, a, **fields)
    assert response.json()["code"] == "FORBIDDEN_DUE_TO_POLICY_TERMS" and "profile~1" in response.json()["fields"]


async def test_invalid_third_party_data_blocks_with_its_code(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, THIRD_PARTY_INVALID)
    page = await open_page(client, doctor.headers, a)
    by_id = {e["id"]: e for e in page["elements"]}
    assert by_id["third-party-error"].get("visible", True) and by_id["approve"]["enabled"] is False
    before = await snapshot(runtime, a)
    response = await post(client, doctor.headers, a, version="1")
    assert response.status_code == 422 and response.json()["code"] == "THIRD_PARTY_DATA_INVALID"
    assert await snapshot(runtime, a) == before
    # Declining stays possible: the insurer's data does not matter for it.
    decline = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "No data", "version": "1"}
    )
    assert decline.status_code == 200


async def test_disclaimer_must_be_acknowledged_and_is_recorded(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, DISCLAIMER)
    before = await snapshot(runtime, a)
    refused = await post(client, doctor.headers, a, version="1")
    assert refused.status_code == 422 and "disclaimer-displayed" in refused.json()["fields"]
    assert await snapshot(runtime, a) == before
    response = await post(client, doctor.headers, a, version="1", **{"disclaimer-displayed": "true"})
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        history = await s.scalar(
            select(AppointmentHistory)
            .where(AppointmentHistory.appointment_id == a)
            .order_by(AppointmentHistory.id.desc())
        )
    assert history.details["disclaimer_acknowledged"] is True


async def test_rejected_alternatives_name_the_offending_fields_and_change_nothing(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    before = await snapshot(runtime, a)
    fields = {
        **card(1, d1, berlin, "2026-11-23", "08:30"),  # less than 2 hours from now (08:00 Berlin)
        **card(2, d1, berlin, "2026-11-24", "16:00"),  # overlaps the approved 16:00 appointment
        **card(3, d1, berlin, "2026-11-24", "7pm"),  # bad format
        "version": "1",
    }
    response = await post(client, doctor.headers, a, **fields)
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR"
    assert set(body["fields"]) == {"time~1", "time~2", "time~3"}
    assert "2 hours" in body["fields"]["time~1"] and "Overlaps" in body["fields"]["time~2"]
    assert await snapshot(runtime, a) == before


async def test_a_fourth_alternative_is_refused_on_post(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    fields = {"version": "1"}
    for n, at in enumerate(["10:00", "11:00", "12:00", "13:00"], start=1):
        fields.update(card(n, d1, berlin, "2026-11-24", at))
    response = await post(client, doctor.headers, a, **fields)
    assert response.status_code == 422 and "date~4" in response.json()["fields"]


async def test_alternatives_need_a_confirmed_timezone_when_the_profile_has_none(client, login, demo, runtime):
    from tests.support.review import NO_TIMEZONE

    doctor = await login("doctor2")
    a = aid(demo, NO_TIMEZONE)
    fields = alternatives(demo.users["doctor2"], demo.locations["munich"], ("2026-11-26", "10:00"))
    refused = await post(client, doctor.headers, a, **fields)
    assert refused.status_code == 422 and "timezone" in refused.json()["fields"]
    response = await post(client, doctor.headers, a, **fields, timezone="Europe/Berlin")
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("fields", "offending"),
    [
        ({"date~1": "2026-13-45", "time~1": "10:00", "profile~1": "1", "location~1": "1"}, "date~1"),
        ({"date~1": "2026-11-24", "time~1": "99:99", "profile~1": "1", "location~1": "1"}, "time~1"),
        ({"date~1": "2026-11-24", "time~1": "10:00", "profile~1": "-5", "location~1": "1"}, "profile~1"),
        ({"date~1": "2026-11-24", "time~1": "10:00", "profile~1": "9" * 40, "location~1": "1"}, "profile~1"),
        ({"date~1": "2026-11-24", "time~1": "10:00", "profile~1": "1", "location~1": "Berlin"}, "location~1"),
        ({"date~1": "２０２６-11-24", "time~1": "10:00", "profile~1": "1", "location~1": "1"}, "date~1"),
        ({"date~1": "x" * 5000}, "date~1"),
        ({"date~x": "2026-11-24"}, "date~x"),
        ({"date~0": "2026-11-24"}, "date~0"),
        ({"time~2": "10:00"}, "date~1"),
        ({"date~100": "2026-11-24"}, "date~100"),
        ({"timezone": "Not/AZone", "date~1": "2026-11-24", "time~1": "10:00"}, "timezone"),
    ],
)
async def test_malformed_input_is_a_validation_error_naming_the_field_and_changes_nothing(
    client, login, demo, runtime, fields, offending
):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    response = await post(client, doctor.headers, a, version="1", **fields)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and offending in body["fields"], body
    assert await snapshot(runtime, a) == before


@pytest.mark.parametrize("version", ["", "abc", "-1", "1" * 30])
async def test_a_malformed_version_is_refused(client, login, demo, version):
    doctor = await login("doctor1")
    response = await post(client, doctor.headers, aid(demo, REQUESTED), version=version)
    assert response.status_code == 422 and "version" in response.json()["fields"]


async def test_the_decline_reason_is_shown_to_the_doctor_and_to_the_patient(client, login, demo):
    doctor = await login("doctor1")
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    reason = "Please see a specialist first.\nI will gladly see you afterwards."
    declined = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"version": "1", "reason": reason}
    )
    assert declined.status_code == 200, declined.text

    def shown(page: dict) -> dict:
        return {e["id"]: e for e in walk(page["elements"])}["decline-reason"]

    review = (await client.put(approve_url(a), headers=doctor.headers)).json()
    assert shown(review)["value"] == reason and shown(review).get("visible", True)
    offers = (await client.put(f"/profile/appointments/{a}/offers", headers=patient.headers)).json()
    assert shown(offers)["value"] == reason and shown(offers)["label"] == "The doctor's reason"
    other = (await client.put(approve_url(aid(demo, PENDING_5)), headers=doctor.headers)).json()
    assert shown(other).get("visible") is False
