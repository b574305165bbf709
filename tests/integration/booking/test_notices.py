"""In-app notices (docs/booking.md), on SQLite and PostgreSQL: the doctor is told in the list when a patient answers
the offers, the patient when the doctor decides; only the owner dismisses a notice; a new request is no notice."""

from __future__ import annotations

import json
import re
from typing import Any

from sqlalchemy import select

from doctordesk.screens.protocol import walk
from doctordesk.store.review_tables import AppointmentOffer
from tests.support.review import PENDING_5, REQUESTED, aid, approve_url

LIST = "/profile/appointments"


async def notices(client, headers) -> list[dict[str, Any]]:
    page = (await client.put(LIST, headers=headers)).json()
    return [e for e in walk(page["elements"]) if e["id"].startswith("notice-")]


async def accept_first_offer(client, runtime, patient, appointment_id: int) -> None:
    async with runtime.db.read() as s:
        offer = (
            await s.scalars(select(AppointmentOffer).where(AppointmentOffer.appointment_id == appointment_id))
        ).first()
    url = f"/profile/appointments/{appointment_id}/offers/{offer.id}/accept"
    response = await client.post(url, headers=patient.headers, data={"version": "1"})
    assert response.status_code == 200, response.text


async def test_the_doctor_sees_a_notice_when_the_patient_accepts_an_offer(client, login, demo, runtime):
    doctor = await login("doctor1")
    patient = await login("patient1")
    page = (await client.put(LIST, headers=doctor.headers)).json()
    assert await notices(client, doctor.headers) == []
    await accept_first_offer(client, runtime, patient, aid(demo, PENDING_5))
    (notice,) = await notices(client, doctor.headers)
    assert "Maria Schmidt accepted the time" in notice["value"]
    assert notice["props"]["appointment"] == aid(demo, PENDING_5)
    # The doctor's open list learns it on its next poll.
    polled = await client.patch(LIST, headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert notice["id"] in json.dumps(polled.json()["patches"])
    # The patient, who acted, has no notice of their own action.
    assert await notices(client, patient.headers) == []


async def test_the_patient_sees_a_notice_when_the_doctor_decides(client, login, demo):
    doctor = await login("doctor1")
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    assert (await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})).status_code == 200
    (notice,) = await notices(client, patient.headers)
    assert "approved" in notice["value"].lower()
    # Which appointment: its date and time in its location's zone, and a link to it.
    assert re.fullmatch(r"Appointment on \w{3} \d\d \w{3} 2026, \d\d:\d\d CES?T", notice["label"])
    (link,) = notice["children"][:1]
    assert link["id"] == f"open-notice-{notice['id'].removeprefix('notice-')}" and link["type"] == "Link"
    assert link["action"] == {"method": "PUT", "endpoint": f"/profile/appointments/{a}/offers"}
    german = (await client.put(LIST, headers={**patient.headers, "Accept-Language": "de"})).json()
    (de,) = [e for e in walk(german["elements"]) if e["id"] == notice["id"]]
    assert de["label"].startswith("Termin am ") and de["children"][0]["label"] == "Termin öffnen"
    assert await notices(client, doctor.headers) == []


async def test_a_notice_is_dismissed_by_its_owner_only(client, login, demo, runtime):
    doctor = await login("doctor1")
    other = await login("doctor2")
    patient = await login("patient1")
    await accept_first_offer(client, runtime, patient, aid(demo, PENDING_5))
    (notice,) = await notices(client, doctor.headers)
    notice_id = notice["id"].removeprefix("notice-")
    assert (await client.post(f"/profile/notices/{notice_id}/dismiss", headers=other.headers)).status_code == 404
    assert (await client.post(f"/profile/notices/{notice_id}/dismiss", headers=patient.headers)).status_code == 404
    assert len(await notices(client, doctor.headers)) == 1
    page = (await client.put(LIST, headers=doctor.headers)).json()
    dismissed = await client.post(
        f"/profile/notices/{notice_id}/dismiss", headers={**doctor.headers, "X-Screen-State": page["state"]}
    )
    assert dismissed.status_code == 200, dismissed.text
    assert any(p["op"] in ("remove", "update") for p in dismissed.json()["patches"])
    assert await notices(client, doctor.headers) == []
    assert (await client.post("/profile/notices/0/dismiss", headers=doctor.headers)).status_code == 422
    assert (await client.post("/profile/notices/dismiss", headers=doctor.headers)).status_code == 200


async def test_dismiss_all_clears_every_notice(client, login, demo, runtime):
    doctor = await login("doctor1")
    patient = await login("patient1")
    await accept_first_offer(client, runtime, patient, aid(demo, PENDING_5))
    reject = await client.post(
        f"/profile/appointments/{aid(demo, 9)}/offers/reject",
        headers=(await login("patient4")).headers,
        data={"version": "1"},
    )
    assert reject.status_code == 200, reject.text
    assert len(await notices(client, doctor.headers)) == 2
    assert (await client.post("/profile/notices/dismiss", headers=doctor.headers)).status_code == 200
    assert await notices(client, doctor.headers) == []
