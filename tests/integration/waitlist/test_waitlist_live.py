"""The waitlist's own loop (``workers/waitlist.py``), as the app runs it, on SQLite and PostgreSQL: a patient's
cancellation wakes it, and the first patient waiting is offered the freed time without anyone driving a round;
their open waitlist screen's topic hears of it (the real-time path)."""

from __future__ import annotations

import asyncio

from doctordesk.domain.events import DomainEvent, patient_topic
from tests.integration.waitlist.support import APPROVED_TUESDAY, cancel, join, offers, slot_of
from tests.support.review import aid


async def test_a_cancellation_wakes_the_waitlist_and_the_first_waiting_is_offered(client, login, demo, runtime):
    patient, owner = await login("patient1"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    offered = asyncio.Event()
    seen: list[DomainEvent] = []

    async def on_event(event: DomainEvent) -> None:
        if event.kind == "waitlist.offered":
            seen.append(event)
            offered.set()

    runtime.bus.subscribe(on_event)
    assert (await join(client, patient, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    # The loop's own round, woken by the cancellation's event (the wait bounds a hang, it times nothing).
    await asyncio.wait_for(offered.wait(), timeout=60)
    assert await offers(runtime) == [(demo.patients["patient1"], "open", slot.start)]
    assert patient_topic(demo.patients["patient1"]) in seen[0].topics
