"""A patient cancels their own appointment from "Your appointment" (docs/booking.md#cancelling), on SQLite and
PostgreSQL: requested, waiting for their answer and approved alike, with an optional reason, after a confirmation
that names the appointment, up to the clinic's deadline; history, audit, the doctor's notice, the event and FHIR say
the patient did it; open offers end with it; anyone else's appointment is 404, and a refusal writes nothing."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import walk
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.integration.booking.test_notices import notices
from tests.support.fhir import resource_of
from tests.support.integration import make_key
from tests.support.review import (
    CANCELED,
    COMPLETED,
    DECLINED,
    PENDING_5,
    REQUESTED,
    Events,
    aid,
    snapshot,
)

PATIENT1_APPROVED = 7  # Dr. Berger, Munich, Maria Schmidt, Tue 01 Dec 09:30 (store/seed/demo.py)


def offers_url(appointment_id: int) -> str:
    return f"/profile/appointments/{appointment_id}/offers"


def cancel_url(appointment_id: int) -> str:
    return f"{offers_url(appointment_id)}/cancel"


def elements(page) -> dict[str, dict]:
    return {e["id"]: e for e in walk(page["elements"])}


async def cancel(client, who, appointment_id: int, **fields: str):
    return await client.post(cancel_url(appointment_id), headers=who.headers, data={"version": "1", **fields})


async def start_of(runtime, appointment_id: int):
    async with runtime.db.read() as s:
        return (await s.get(Appointment, appointment_id)).start_at


async def test_a_patient_cancels_their_requested_appointment_and_the_doctor_is_told(client, login, demo, runtime):
    patient, doctor = await login("patient1"), await login("doctor1")
    a = aid(demo, REQUESTED)
    events = Events(runtime)
    response = await cancel(client, patient, a, reason="Feeling better")
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["navigate"] == "/profile/appointments"
    assert answer["notice"]["text"] == "Your appointment is canceled."
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        history = (
            await s.scalars(
                select(AppointmentHistory)
                .where(AppointmentHistory.appointment_id == a)
                .order_by(AppointmentHistory.id.desc())
            )
        ).first()
        audit = (
            await s.scalars(select(AuditLog).where(AuditLog.entity_id == a, AuditLog.action == "appointment.cancel"))
        ).one()
    assert (row.status, row.version) == (Status.CANCELED, 2)
    assert history.actor_id == patient.user["id"] and (history.from_status, history.to_status) == (1, 4)
    assert history.details["by"] == "patient" and history.details["reason"] == "Feeling better"
    assert audit.actor_id == patient.user["id"] and audit.details["by"] == "patient"
    # The doctor's list updates live (the doctor's topic) and the doctor gets a notice; the patient, who acted, none.
    (event,) = [e for e in events.seen if e.kind == "appointment.cancel"]
    assert f"doctor:{doctor.user['id']}" in event.topics and event.data["canceled_by"] == "patient"
    assert event.notify_user_ids == (doctor.user["id"],)
    (notice,) = await notices(client, doctor.headers)
    assert "Maria Schmidt canceled the appointment on" in notice["value"] and "Feeling better" in notice["value"]
    assert await notices(client, patient.headers) == []


async def test_open_offers_end_with_the_canceled_appointment(client, login, demo, runtime):
    a = aid(demo, PENDING_5)
    response = await cancel(client, await login("patient1"), a)
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        states = set(await s.scalars(select(AppointmentOffer.state).where(AppointmentOffer.appointment_id == a)))
        history = (await s.scalars(select(AppointmentHistory).where(AppointmentHistory.appointment_id == a))).all()
    assert states == {OfferState.WITHDRAWN}
    assert history[-1].details["reason"] == "" and history[-1].details["offers"]


async def test_an_approved_appointment_is_canceled_without_a_reason_and_fhir_says_the_patient_did(client, login, demo):
    a = aid(demo, PATIENT1_APPROVED)
    assert (await cancel(client, await login("patient1"), a)).status_code == 200
    key = await make_key(client, (await login("admin")).headers)
    body = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=key.headers))
    assert body["status"] == "cancelled"
    codings = {c["code"] for c in body["cancelationReason"]["coding"]}
    assert "pat" in codings


async def test_the_reason_travels_to_fhir_as_text(client, login, demo):
    a = aid(demo, REQUESTED)
    assert (await cancel(client, await login("patient1"), a, reason="Moved away")).status_code == 200
    key = await make_key(client, (await login("admin")).headers)
    body = resource_of(await client.get(f"/fhir/Appointment/{a}", headers=key.headers))
    assert body["cancelationReason"]["text"] == "Moved away"


async def test_cancel_asks_for_a_confirmation_that_names_the_appointment(client, login, demo):
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    page = elements((await client.put(offers_url(a), headers=patient.headers)).json())
    button = page["cancel-appointment"]
    assert button.get("visible", True) and button["action"] == {"method": "PUT", "endpoint": cancel_url(a)}
    assert page["cancel-modal"]["visible"] is False
    confirming = (await client.put(cancel_url(a), headers=patient.headers)).json()
    assert confirming["endpoint"] == confirming["poll"] == cancel_url(a)
    modal = elements(confirming)["cancel-modal"]
    assert modal.get("visible", True) and modal["props"]["cancel"] == "cancel-back"
    assert modal["value"].startswith("Your appointment with Dr. Anna Berger at Berlin Mitte Clinic on Wed 25 Nov 2026")
    fields = {c["id"]: c for c in modal["children"]}
    assert fields["reason"]["name"] == "reason" and fields["version~cancel"]["value"] == "1"
    assert fields["cancel-submit"]["action"]["endpoint"] == cancel_url(a)
    assert fields["cancel-back"]["action"] == {"method": "PUT", "endpoint": offers_url(a)}
    german = (await client.put(cancel_url(a), headers={**patient.headers, "Accept-Language": "de"})).json()
    de = elements(german)
    assert de["cancel-modal"]["label"] == "Diesen Termin stornieren?"
    assert de["cancel-modal"]["value"].startswith("Ihr Termin bei Dr. Anna Berger in Berlin Mitte Clinic am ")


async def test_the_status_reads_as_a_sentence_in_the_patients_words(client, login, demo):
    patient = await login("patient1")
    page = elements((await client.put(offers_url(aid(demo, REQUESTED)), headers=patient.headers)).json())
    assert page["status-note"]["value"].startswith("Your request for Wed 25 Nov 2026, 09:00")
    assert page["status-note"]["value"].endswith("is waiting for the doctor.")
    approved = elements((await client.put(offers_url(aid(demo, PATIENT1_APPROVED)), headers=patient.headers)).json())
    assert approved["status-note"]["value"].endswith("is confirmed.")
    german = (
        await client.put(offers_url(aid(demo, REQUESTED)), headers={**patient.headers, "Accept-Language": "de"})
    ).json()
    assert elements(german)["status-note"]["value"].startswith("Ihre Anfrage für ")


async def test_reject_all_offered_times_shows_only_while_offers_are_open(client, login, demo):
    patient = await login("patient1")
    requested = elements((await client.put(offers_url(aid(demo, REQUESTED)), headers=patient.headers)).json())
    assert requested["offers-empty"].get("visible", True) and requested["reject-all"]["visible"] is False
    pending = elements((await client.put(offers_url(aid(demo, PENDING_5)), headers=patient.headers)).json())
    assert pending["reject-all"].get("visible", True)


async def test_past_the_clinics_deadline_the_patient_is_told_to_contact_the_clinic_and_nothing_is_written(
    client, login, demo, runtime, clock
):
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    start = await start_of(runtime, a)
    page = (await client.put(offers_url(a), headers=patient.headers)).json()
    # The page holds until the deadline, then shows the sentence instead of the button on its next poll.
    clock.advance(start - timedelta(hours=23) - clock.now())
    patient = await login("patient1")  # a new sign-in: the first one's token has expired meanwhile
    polled = await client.patch(offers_url(a), headers={**patient.headers, "X-Screen-State": page["state"]})
    assert polled.status_code == 200, polled.text
    assert "cancel-note" in json.dumps(polled.json()["patches"])
    now = elements((await client.put(offers_url(a), headers=patient.headers)).json())
    assert now["cancel-appointment"]["visible"] is False
    assert now["cancel-note"]["value"] == (
        "Appointments can be canceled here up to 24 hours before they start. Please contact the clinic."
    )
    assert (
        elements((await client.put(cancel_url(a), headers=patient.headers)).json())["cancel-modal"]["visible"] is False
    )
    before = await snapshot(runtime, a)
    refused = await cancel(client, patient, a, reason="Late")
    assert refused.status_code == 409
    assert refused.json()["code"] == "INVALID_TRANSITION" and "contact the clinic" in refused.json()["message"]
    assert await snapshot(runtime, a) == before


async def test_a_closed_appointment_has_no_cancel_and_a_cancel_is_refused(client, login, demo, runtime):
    for index, username in ((CANCELED, "patient4"), (DECLINED, "patient1"), (COMPLETED, "patient5")):
        a = aid(demo, index)
        owner = await login(username)
        page = elements((await client.put(offers_url(a), headers=owner.headers)).json())
        assert page["cancel-appointment"]["visible"] is False and page["cancel-note"]["visible"] is False
        before = await snapshot(runtime, a)
        refused = await cancel(client, owner, a)
        assert (refused.status_code, refused.json()["code"]) == (409, "INVALID_TRANSITION"), index
        assert await snapshot(runtime, a) == before


async def test_another_patients_appointment_is_not_found(client, login, demo, runtime):
    a = aid(demo, REQUESTED)
    other = await login("patient2")
    before = await snapshot(runtime, a)
    assert (await client.put(cancel_url(a), headers=other.headers)).status_code == 404
    assert (await cancel(client, other, a)).status_code == 404
    doctor = await login("doctor1")
    assert (await cancel(client, doctor, a)).status_code == 404
    assert (await client.put(cancel_url(a), headers=doctor.headers)).status_code == 404  # the patient's alone
    assert await snapshot(runtime, a) == before


async def test_the_reason_keeps_the_free_text_rule_and_a_stale_page_is_refused(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    for reason, says in (("x" * 1001, "At most 1000 characters."), ("bad\x00text", "Contains control characters.")):
        refused = await cancel(client, patient, a, reason=reason)
        assert refused.status_code == 422 and refused.json()["fields"] == {"reason": says}
    stale = await cancel(client, patient, a, version="7")
    assert (stale.status_code, stale.json()["code"]) == (409, "APPOINTMENT_CHANGED")
    assert await snapshot(runtime, a) == before
