"""An entry past its last day ends by itself (docs/waitlist.md), on the Clock, on SQLite and PostgreSQL: the round
after its last day has passed in the location's zone ends it as ``expired``, the patient's screen drops it and FHIR
reads it as cancelled; the last day itself, to its local midnight, it still waits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from doctordesk.screens.protocol import walk
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.waitlist.tables import WaitlistEntry
from tests.integration.waitlist.support import APPROVED_TUESDAY, WAITLIST, join, slot_of
from tests.support.fhir_models import validate
from tests.support.review import aid


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)


async def _state(runtime) -> tuple[str, datetime | None]:
    async with runtime.db.read() as s:
        entry = (await s.scalars(select(WaitlistEntry))).one()
        return entry.state, entry.ended_at


async def test_an_entry_ends_at_the_round_after_its_last_day_in_the_locations_zone(client, login, demo, runtime, clock):
    patient = await login("patient1")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    form = slot.form()
    assert form["until"] == "2026-11-24"  # Berlin: its last day ends at 23:00 UTC
    assert (await join(client, patient, form)).status_code == 200, form

    clock.advance(datetime(2026, 11, 24, 22, 59, tzinfo=UTC) - clock.now())  # 23:59 in Berlin: still its last day
    await run_round(runtime)
    assert await _state(runtime) == ("waiting", None)

    ended_at = datetime(2026, 11, 24, 23, 0, 1, tzinfo=UTC)  # past midnight in Berlin, still the 24th in UTC
    clock.advance(ended_at - clock.now())
    await run_round(runtime)
    state, when = await _state(runtime)
    assert state == "expired" and when is not None and when.replace(tzinfo=UTC) == ended_at

    patient = await login("patient1")  # signed in again: a day and a half later
    page = (await client.put(WAITLIST, headers=patient.headers)).json()
    shown = {e["id"] for e in walk(page["elements"])}
    assert "no-entries" in shown and not any(i.startswith("entry-") for i in shown)
    async with runtime.db.read() as s:
        entry_id = (await s.scalars(select(WaitlistEntry.id))).one()
    body = (await client.get(f"/fhir/Appointment/waitlist-{entry_id}", headers=patient.headers)).json()
    validate(body)
    assert body["status"] == "cancelled" and body["cancelationReason"]["text"] == "its last day passed"

    await run_round(runtime)  # a later round changes nothing more
    assert await _state(runtime) == ("expired", when)
