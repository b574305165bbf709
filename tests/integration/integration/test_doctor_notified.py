"""The doctor is told, by push on the doctor's phone, of what patients and clinic systems do: a new request, a
cancellation by the patient, a reschedule request, and the patient's accept or reject of offers (SQLite and
PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.store.realtime_tables import PushOutbox
from doctordesk.store.review_tables import AppointmentOffer
from tests.support.integration import make_key, request_body
from tests.support.review import APPROVED, PENDING_5, aid

PHONE = {"X-Device-Id": "doctor-phone", "X-Push-Platform": "ios", "X-Push-Token": "tok-doctor"}


async def pushes_for(runtime, user_id: int) -> list[PushOutbox]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(PushOutbox).where(PushOutbox.user_id == user_id))).all())


async def doctor_with_phone(client, login):
    doctor = await login("doctor1")
    assert (await client.put("/profile/appointments", headers={**doctor.headers, **PHONE})).status_code == 200
    return doctor


async def test_the_doctor_gets_a_push_when_a_patient_accepts_an_offer(client, login, demo, runtime):
    doctor = await doctor_with_phone(client, login)
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    async with runtime.db.read() as s:
        offer = (await s.scalars(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))).first()
    response = await client.post(
        f"/profile/appointments/{a}/offers/{offer.id}/accept", headers=patient.headers, data={"version": "1"}
    )
    assert response.status_code == 200, response.text
    (push,) = await pushes_for(runtime, doctor.user["id"])
    assert push.kind == "appointment.accept-offer" and "Maria Schmidt accepted the time" in (push.text or "")
    # The phone showed the list last: the message makes it refresh that screen.
    assert push.data.startswith("Timeout")


async def test_the_doctor_gets_a_push_when_a_patient_rejects_the_offers(client, login, demo, runtime):
    doctor = await doctor_with_phone(client, login)
    patient = await login("patient1")
    response = await client.post(
        f"/profile/appointments/{aid(demo, PENDING_5)}/offers/reject", headers=patient.headers, data={"version": "1"}
    )
    assert response.status_code == 200, response.text
    (push,) = await pushes_for(runtime, doctor.user["id"])
    assert push.kind == "appointment.reject-offers" and "rejected the offered times" in (push.text or "")


async def test_the_doctor_gets_a_push_for_requests_patient_cancellations_and_reschedule_requests(
    client, login, demo, runtime
):
    doctor = await doctor_with_phone(client, login)
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    created = await client.post("/integration/v1/appointment-requests", headers=key.headers, json=request_body(demo))
    assert created.status_code == 201
    a = aid(demo, APPROVED)
    moved = await client.post(
        f"/integration/v1/appointments/{a}/reschedule-request",
        headers=key.headers,
        json={"start": "2026-11-27T09:00:00+01:00"},
    )
    assert moved.status_code == 200, moved.text
    canceled = await client.post(
        f"/integration/v1/appointments/{created.json()['id']}/cancel",
        headers=key.headers,
        json={"by": "patient", "reason": "Found another date"},
    )
    assert canceled.status_code == 200
    kinds = [p.kind for p in sorted(await pushes_for(runtime, doctor.user["id"]), key=lambda p: p.id)]
    assert kinds == ["appointment.request", "appointment.reschedule-request", "appointment.cancel"]
