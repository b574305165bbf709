"""Real concurrency on SQLite and PostgreSQL: many requests at once, each on its own database connection."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy import func, select

from doctordesk.domain.appointments.status import Status
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AppointmentHistory
from tests.support.review import (
    CHEN_OUT_OF_NETWORK,
    CHEN_PRESCRIPTION,
    PRESCRIPTION,
    REQUESTED,
    aid,
    approve_url,
    card,
)


async def test_simultaneous_decisions_on_one_appointment_exactly_one_wins(client, login, demo, runtime):
    doctor = await login("doctor1")
    elsewhere = await login("doctor1")  # the same doctor on another device
    a = aid(demo, REQUESTED)
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]

    def attempt(i: int):
        headers = (doctor if i % 2 else elsewhere).headers
        if i % 3 == 0:
            return client.post(
                f"/profile/appointments/{a}/decline", headers=headers, data={"reason": f"r{i}", "version": "1"}
            )
        if i % 3 == 1:
            return client.post(approve_url(a), headers=headers, data={"version": "1"})
        fields = {
            **card(1, d1, berlin, "2026-11-24", f"{9 + i % 6:02d}:00"),
            "version": "1",
            "timezone": "Europe/Berlin",
        }
        return client.post(approve_url(a), headers=headers, data=fields)

    responses = await asyncio.gather(*(attempt(i) for i in range(10)))
    codes = sorted(r.status_code for r in responses)
    assert codes.count(200) == 1, [r.text for r in responses]
    others = [r.text for r in responses if r.status_code != 200 and r.json()["code"] != "APPOINTMENT_CHANGED"]
    assert others == []
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
        decisions = await s.scalar(
            select(func.count())
            .select_from(AppointmentHistory)
            .where(AppointmentHistory.appointment_id == a, AppointmentHistory.from_status == int(Status.REQUESTED))
        )
    assert row.version == 2 and decisions == 1


async def test_two_doctors_sessions_cannot_double_book_one_slot(client, login, demo, runtime):
    """Dr. Berger proposes Dr. Chen's Friday 11:00 in London for two requests while Dr. Chen proposes the same
    slot for two of hers, all at once: exactly one offer holds the slot."""
    d1 = await login("doctor1")
    d3 = await login("doctor3")
    london, chen = demo.locations["london"], demo.users["doctor3"]
    # Each doctor types times in their profile's timezone: 12:00 Berlin and 11:00 London are the same instant.
    berlin_time = card(1, chen, london, "2026-11-27", "12:00")
    london_time = card(1, chen, london, "2026-11-27", "11:00")
    attempts = [
        (d1, aid(demo, REQUESTED), berlin_time),
        (d1, aid(demo, PRESCRIPTION), berlin_time),
        (d3, aid(demo, CHEN_PRESCRIPTION), london_time),
        (d3, aid(demo, CHEN_OUT_OF_NETWORK), london_time),
    ]
    responses = await asyncio.gather(
        *(client.post(approve_url(a), headers=who.headers, data={**slot, "version": "1"}) for who, a, slot in attempts)
    )
    ok = [r for r in responses if r.status_code == 200]
    assert len(ok) == 1, [r.text for r in responses]
    for r in responses:
        if r.status_code != 200:
            body = r.json()
            assert body["code"] == "FIELDS_VALIDATION_ERROR" and "Overlaps" in body["fields"]["time~1"]
    async with runtime.db.read() as s:
        held = await s.scalar(
            select(func.count())
            .select_from(AppointmentOffer)
            .where(
                AppointmentOffer.doctor_id == chen,
                AppointmentOffer.start_at == datetime(2026, 11, 27, 11, 0, tzinfo=UTC),
            )
        )
    assert held == 1


async def test_an_approval_and_an_offer_for_the_same_slot_do_not_both_succeed(client, login, demo, runtime):
    """Approving a request as proposed and proposing an overlapping alternative race for the doctor's time."""
    d1 = await login("doctor1")
    requested = aid(demo, REQUESTED)  # Wed 25 Nov 09:00 Berlin
    other = aid(demo, PRESCRIPTION)
    slot = card(1, demo.users["doctor1"], demo.locations["berlin"], "2026-11-25", "09:15")
    first, second = await asyncio.gather(
        client.post(approve_url(requested), headers=d1.headers, data={"version": "1"}),
        client.post(approve_url(other), headers=d1.headers, data={**slot, "version": "1"}),
    )
    assert sorted([first.status_code, second.status_code]) == [200, 422], (first.text, second.text)
