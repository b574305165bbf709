"""The waitlist reaches webhooks (docs/webhooks.md#event-types; SQLite and PostgreSQL): a freed time offered is
``waitlist.offer-made``, an offer accepted ``waitlist.offer-accepted`` (with the request it became), each at the real
receiver, signed, with ids and times only."""

from __future__ import annotations

import pytest

from doctordesk.services.waitlist.matching import run_round
from tests.integration.waitlist.support import APPROVED_TUESDAY, cancel, join, offer_ids, slot_of
from tests.support.review import aid


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(
        database_url, webhook_in_process=False, webhook_allow_private_addresses=True, waitlist_in_process=False
    )


async def test_an_offer_and_its_acceptance_reach_the_receiver(
    client, login, demo, runtime, receiver, register, dispatcher
):
    endpoint = await register(receiver.url(), ["waitlist.offer-made", "waitlist.offer-accepted"])
    patient, owner = await login("patient1"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    answer = await client.post(f"/profile/waitlist/offers/{offer_id}/accept", headers=patient.headers)
    assert answer.status_code == 200, answer.text
    await dispatcher.drain()
    made, accepted = (got.verified(endpoint["secret"]) for got in receiver.requests())
    assert made["type"] == "waitlist.offer-made" and accepted["type"] == "waitlist.offer-accepted"
    assert made["data"]["offer_id"] == offer_id == accepted["data"]["offer_id"]
    assert made["data"]["patient_id"] == demo.patients["patient1"]
    assert made["data"]["doctor_id"] == slot.doctor_id and made["data"]["start"] == slot.start.isoformat()
    assert made["data"]["mode"] == "one-at-a-time"
    assert isinstance(accepted["data"]["appointment_id"], int) and accepted["data"]["moved"] is False
    assert "Maria Schmidt" not in str(made) + str(accepted)  # ids only, never names
