"""The dashboard follows the waitlist (docs/dashboard.md#live), on SQLite and PostgreSQL: a freed time the waitlist
finds and offers counts when it is offered, with no appointment changing at that moment, and an open dashboard's
next poll after the hold shows it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from doctordesk.screens.protocol import walk
from doctordesk.services.dashboard import screen as dashboard
from doctordesk.services.waitlist.matching import run_round
from tests.integration.waitlist.support import APPROVED_TUESDAY, cancel, join, slot_of
from tests.support.review import aid

ADMIN = "/profile/admin/dashboard"


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)  # the test drives the round


def found_this_week(chart: dict) -> str:
    return str(chart["props"]["rows"][-1][1])


async def test_a_time_the_waitlist_offers_reaches_the_open_dashboard(client, login, demo, runtime, clock):
    patient, owner, admin = await login("patient1"), await login("patient4"), await login("admin")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    page = (await client.put(ADMIN, headers=admin.headers)).json()
    [chart] = [e for e in walk(page["elements"]) if e["id"] == "chart-waitlist"]
    assert found_this_week(chart) == "0"  # freed, but not yet found: the round has not run
    assert (await run_round(runtime)).offered == 1
    clock.advance(timedelta(seconds=dashboard.HOLD_SECONDS))
    poll = await client.patch(ADMIN, headers={**admin.headers, "X-Screen-State": page["state"]})
    assert poll.status_code == 200, poll.text
    changed = [p for p in poll.json().get("patches", []) if p.get("id") == "chart-waitlist"]
    assert changed and changed[0]["op"] == "update", poll.json()
    assert str(changed[0]["set"]["props"]["rows"][-1][1]) == "1"
