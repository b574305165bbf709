"""Times freed otherwise than by a cancellation reach the waitlist (docs/waitlist.md#what-freed-means), on SQLite and
PostgreSQL: an absence withdrawn, new weekly hours, the doctor's offered times rejected by their patient and a hold
that lapses on the Clock each offer the time to the patient waiting for it."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from doctordesk.domain.waitlist.rules import DAY_KEYS
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.fhir_tables import SlotHold
from doctordesk.store.review_tables import AppointmentOffer
from tests.integration.waitlist.support import join, offers
from tests.support.review import PENDING_5, aid

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)


def wish(demo, *, day: str, weekday: str, start: str, end: str) -> dict[str, str]:
    return {
        "doctor": str(demo.users["doctor1"]),
        "location": str(demo.locations["berlin"]),
        "service": "consultation",
        "until": day,
        f"days-{weekday}": "true",
        "from": start,
        "to": end,
    }


async def test_an_absence_withdrawn_offers_its_time(client, login, demo, runtime):
    admin, patient = await login("admin"), await login("patient3")
    doctor = demo.users["doctor1"]
    added = await client.post(
        f"/admin/doctors/{doctor}/hours-exceptions",
        json={
            "day": "2026-11-25",
            "kind": "absence",
            "location_id": demo.locations["berlin"],
            "opens": "08:00",
            "closes": "09:00",
            "confirm": True,
        },
        headers=admin.headers,
    )
    assert added.status_code == 200, added.text
    assert (
        await join(client, patient, wish(demo, day="2026-11-25", weekday="wed", start="08:00", end="08:30"))
    ).status_code == 200
    assert (await run_round(runtime)).offered == 0  # the doctor is away then
    removed = await client.post(
        f"/admin/hours-exceptions/{added.json()['exception_id']}/remove", json={"confirm": True}, headers=admin.headers
    )
    assert removed.status_code == 200, removed.text
    assert (await run_round(runtime)).offered == 1
    start = datetime(2026, 11, 25, 8, 0, tzinfo=BERLIN)
    assert await offers(runtime) == [(demo.patients["patient3"], "open", start)]


async def test_new_weekly_hours_offer_their_times(client, login, demo, runtime):
    admin, patient = await login("admin"), await login("patient3")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    assert (
        await join(client, patient, wish(demo, day="2026-11-28", weekday="sat", start="09:00", end="09:30"))
    ).status_code == 200
    assert (await run_round(runtime)).offered == 0  # no Saturday hours yet
    rules = [{"weekday": d, "opens": "08:00", "closes": "17:00"} for d in range(5)]
    rules.append({"weekday": 5, "opens": "09:00", "closes": "13:00"})
    changed = await client.put(
        f"/admin/doctors/{doctor}/hours/{berlin}", json={"rules": rules, "confirm": True}, headers=admin.headers
    )
    assert changed.status_code == 200, changed.text
    assert (await run_round(runtime)).offered == 1
    start = datetime(2026, 11, 28, 9, 0, tzinfo=BERLIN)
    assert await offers(runtime) == [(demo.patients["patient3"], "open", start)]


async def test_offers_rejected_free_their_times_for_the_waitlist(client, login, demo, runtime):
    owner, patient, admin = await login("patient1"), await login("patient3"), await login("admin")
    a = aid(demo, PENDING_5)
    async with runtime.db.read() as s:
        offered = (
            await s.scalars(
                select(AppointmentOffer).where(AppointmentOffer.appointment_id == a).order_by(AppointmentOffer.start_at)
            )
        ).first()
    local = offered.start_at.astimezone(BERLIN)
    form = wish(
        demo,
        day=local.date().isoformat(),
        weekday=DAY_KEYS[local.weekday()],
        start=f"{local:%H:%M}",
        end=f"{local + timedelta(minutes=30):%H:%M}",
    )
    form["doctor"], form["location"] = str(offered.doctor_id), str(offered.location_id)
    # The same weekday of earlier weeks is free: the doctor is away those days, so only the offered time suits.
    earlier = local.date() - timedelta(days=7)
    while earlier >= demo.now.date():
        away = {"day": earlier.isoformat(), "kind": "absence", "location_id": offered.location_id, "confirm": True}
        response = await client.post(
            f"/admin/doctors/{offered.doctor_id}/hours-exceptions", json=away, headers=admin.headers
        )
        assert response.status_code == 200, response.text
        earlier -= timedelta(days=7)
    assert (await join(client, patient, form)).status_code == 200
    assert (await run_round(runtime)).offered == 0  # offered to patient1 by the doctor: taken
    rejected = await client.post(
        f"/profile/appointments/{a}/offers/reject", headers=owner.headers, data={"version": "1"}
    )
    assert rejected.status_code == 200, rejected.text
    assert (await run_round(runtime)).offered == 1
    assert await offers(runtime) == [(demo.patients["patient3"], "open", offered.start_at)]


async def test_a_hold_that_lapses_frees_its_time_on_the_clock(client, login, demo, runtime, clock):
    patient = await login("patient3")
    start = datetime(2026, 11, 24, 15, 30, tzinfo=BERLIN)  # the day after the test's Monday: no earlier Tuesday
    async with runtime.db.transaction() as s:
        s.add(
            SlotHold(
                doctor_id=demo.users["doctor1"],
                location_id=demo.locations["berlin"],
                start_at=start,
                duration_minutes=30,
                expires_at=clock.now() + timedelta(minutes=10),
                holder="account:0",
                created_at=clock.now(),
            )
        )
    assert (
        await join(client, patient, wish(demo, day="2026-11-24", weekday="tue", start="15:30", end="16:00"))
    ).status_code == 200
    assert (await run_round(runtime)).offered == 0  # held for someone else
    clock.advance(timedelta(minutes=11))
    assert (await run_round(runtime)).offered == 1
    assert await offers(runtime) == [(demo.patients["patient3"], "open", start)]
