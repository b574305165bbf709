"""Times freed by the clinic's hours reach the waitlist (docs/waitlist.md#what-freed-means), on SQLite and
PostgreSQL: an absence withdrawn, and new weekly hours, each offer the time to the patient waiting for it."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from doctordesk.services.waitlist.matching import run_round
from tests.integration.waitlist.support import join, offers

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
