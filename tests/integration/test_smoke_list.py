from __future__ import annotations


async def test_doctor_sees_the_appointment_list_and_an_unchanged_poll_is_empty(client, login):
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert page["kind"] == "page" and page["screen"] == "appointment-list"
    poll = await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert poll.json()["patches"] == []
