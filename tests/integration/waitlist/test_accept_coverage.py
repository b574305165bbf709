"""Accepting an offered time asks the booking screen's insurance question (docs/waitlist.md, "Accepting"), on
SQLite and PostgreSQL: a patient whose policy does not cover the time is refused with the booking's error and its
words, and nothing is written — no request, the time not claimed, the offer still open."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistTime
from tests.integration.waitlist.support import APPROVED_TUESDAY, WAITLIST, cancel, join, offer_ids, offers, slot_of
from tests.support.errors import assert_error
from tests.support.review import aid


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)


async def test_an_offer_the_patients_policy_does_not_cover_is_refused_as_booking_refuses_it(
    client, login, demo, runtime
):
    expired, owner = await login("patient2"), await login("patient4")  # patient2's policy has expired
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, expired, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient2"])
    async with runtime.db.read() as s:
        before = await s.scalar(select(func.count()).select_from(Appointment))

    refused = await client.post(f"{WAITLIST}/offers/{offer_id}/accept", headers=expired.headers)
    body = assert_error(refused, 422, "APPOINTMENT_DATE_NOT_COVERED")
    assert body["fields"]["start"].startswith("Your insurance policy does not cover this date")

    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Appointment)) == before
        assert (await s.scalars(select(WaitlistTime.taken_offer_id))).all() == [None]
    assert await offers(runtime) == [(demo.patients["patient2"], "open", slot.start)]
    german = await client.post(
        f"{WAITLIST}/offers/{offer_id}/accept", headers={**expired.headers, "Accept-Language": "de"}
    )
    assert assert_error(german, 422, "APPOINTMENT_DATE_NOT_COVERED")["fields"]["start"].startswith(
        "Ihre Versicherung deckt dieses Datum nicht"
    )
