"""A time taken through the waitlist whose request is not kept is given back (docs/waitlist.md, "Given back"), on
SQLite and PostgreSQL: the doctor declines it, or the patient cancels it, and the next matching patient is offered
the time and can take it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistOffer, WaitlistTime
from tests.integration.waitlist.support import APPROVED_TUESDAY, WAITLIST, cancel, join, offer_ids, offers, slot_of
from tests.support.review import aid


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)


async def _accepted_request(runtime, offer_id: int) -> int:
    async with runtime.db.read() as s:
        return (await s.scalars(select(WaitlistOffer.appointment_id).where(WaitlistOffer.id == offer_id))).one()


async def _taken(runtime) -> list[int | None]:
    async with runtime.db.read() as s:
        return list(await s.scalars(select(WaitlistTime.taken_offer_id)))


async def test_a_request_the_doctor_declines_gives_its_time_to_the_next_patient(client, login, demo, runtime, clock):
    first, second, owner = await login("patient1"), await login("patient5"), await login("patient4")
    doctor = await login("doctor1")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    clock.advance(timedelta(seconds=1))
    await join(client, second, slot.form())
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    taken = await client.post(f"{WAITLIST}/offers/{offer_id}/accept", headers=first.headers)
    assert taken.status_code == 200, taken.text
    request_id = await _accepted_request(runtime, offer_id)
    assert (await run_round(runtime)).offered == 0  # taken while the request is open
    assert await _taken(runtime) == [offer_id]

    declined = await client.post(
        f"/profile/appointments/{request_id}/decline",
        headers=doctor.headers,
        data={"reason": "Not this week", "version": "1"},
    )
    assert declined.status_code == 200, declined.text
    assert (await run_round(runtime)).offered == 1
    assert await _taken(runtime) == [None]
    p1, p3 = demo.patients["patient1"], demo.patients["patient5"]
    assert await offers(runtime) == [(p1, "accepted", slot.start), (p3, "open", slot.start)]

    (next_offer,) = await offer_ids(runtime, p3)
    won = await client.post(f"{WAITLIST}/offers/{next_offer}/accept", headers=second.headers)
    assert won.status_code == 200, won.text
    async with runtime.db.read() as s:
        requested = (
            await s.scalars(
                select(Appointment.patient_id).where(
                    Appointment.start_at == slot.start, Appointment.status == Status.REQUESTED
                )
            )
        ).all()
    assert requested == [p3]


async def test_a_request_its_patient_cancels_comes_back_to_the_one_who_lost_it(client, login, demo, runtime):
    # All at once: both are offered the time, the second loses it; the winner cancels, the loser gets it again.
    admin = await login("admin")
    chosen = await client.put("/admin/clinic", headers=admin.headers, json={"waitlist_mode": "all-at-once"})
    assert chosen.status_code == 200, chosen.text
    first, second, owner = await login("patient1"), await login("patient5"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    await join(client, second, slot.form())
    await cancel(client, owner, slot.appointment_id)
    assert (await run_round(runtime)).offered == 2
    (winner,) = await offer_ids(runtime, demo.patients["patient1"])
    (loser,) = await offer_ids(runtime, demo.patients["patient5"])
    assert (await client.post(f"{WAITLIST}/offers/{winner}/accept", headers=first.headers)).status_code == 200
    assert await offer_ids(runtime, demo.patients["patient5"], "gone") == [loser]

    await cancel(client, first, await _accepted_request(runtime, winner))
    assert (await run_round(runtime)).offered == 1
    assert await offer_ids(runtime, demo.patients["patient5"]) == [loser]  # the same offer, open again
    won = await client.post(f"{WAITLIST}/offers/{loser}/accept", headers=second.headers)
    assert won.status_code == 200, won.text
    assert await _taken(runtime) == [loser]


async def test_a_request_still_open_keeps_its_time(client, login, demo, runtime, clock):
    first, second, owner = await login("patient1"), await login("patient5"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    clock.advance(timedelta(seconds=1))
    await join(client, second, slot.form())
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    assert (await client.post(f"{WAITLIST}/offers/{offer_id}/accept", headers=first.headers)).status_code == 200
    clock.advance(timedelta(hours=2))
    assert (await run_round(runtime)).offered == 0
    assert await _taken(runtime) == [offer_id]
    assert await offer_ids(runtime, demo.patients["patient5"]) == []
