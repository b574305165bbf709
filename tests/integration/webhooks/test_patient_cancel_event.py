"""A patient's cancel from "Your appointment" reaches webhooks as ``appointment.canceled``, saying the patient
canceled (docs/webhooks.md#payload; SQLite and PostgreSQL)."""

from __future__ import annotations

from tests.support.review import REQUESTED, aid


async def test_a_patients_cancel_is_sent_as_appointment_canceled_by_the_patient(
    client, login, demo, receiver, register, dispatcher
):
    endpoint = await register(receiver.url(), ["appointment.canceled"])
    a = aid(demo, REQUESTED)
    patient = await login("patient1")
    response = await client.post(
        f"/profile/appointments/{a}/offers/cancel", headers=patient.headers, data={"version": "1", "reason": "Ill"}
    )
    assert response.status_code == 200, response.text
    await dispatcher.drain()
    [got] = receiver.requests()
    payload = got.verified(endpoint["secret"])
    assert payload["type"] == "appointment.canceled"
    data = payload["data"]
    assert data["appointment_id"] == a and data["status"] == {"code": 4, "name": "canceled"}
    assert data["canceled_by"] == "patient" and data["previous_status"]["name"] == "requested"
    assert "Ill" not in got.body.decode()  # metadata only: never the reason's text
