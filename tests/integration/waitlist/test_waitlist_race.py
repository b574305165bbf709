"""Exactly one patient wins a freed time (docs/waitlist.md#races), on SQLite and PostgreSQL: fifty patients offered
the same time all-at-once accept it at the same moment (``asyncio.gather`` on the service layer, each on its own
connection, asking again when answered busy); one request is placed, the forty-nine others are refused with
APPOINTMENT_CHANGED and told it is gone."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, ServiceBusy
from doctordesk.domain.roles import Actor, Role
from doctordesk.services.waitlist import accepting, entries
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.tables import Appointment, InsurancePolicy, Patient, User
from doctordesk.store.waitlist.tables import WaitlistOffer
from tests.integration.waitlist.support import APPROVED_TUESDAY, cancel, slot_of
from tests.support.review import Events, aid

CROWD = 50
VALID_DATA = json.dumps({"member_id": "M-1001", "plan": "comfort", "status": "active"})


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False, waitlist_mode="all-at-once")


async def crowd(runtime, now) -> list[Actor]:
    """``CROWD`` patients with accounts of their own."""
    actors = []
    async with runtime.db.transaction() as s:
        for n in range(CROWD):
            u = User(username=f"crowd{n}", password_hash="x", role=Role.PATIENT.value, display_name=f"Crowd {n}",
                     active=True, created_at=now)  # fmt: skip
            s.add(u)
            await s.flush()
            p = Patient(user_id=u.id, name=f"Crowd {n}")
            s.add(p)
            await s.flush()
            # Covered: accepting asks the booking's insurance question first.
            s.add(InsurancePolicy(patient_id=p.id, insurer="Hansa Health", policy_number=f"C-{n}",
                                  valid_from=now.date() - timedelta(days=10), valid_to=now.date() + timedelta(days=300),
                                  network={}, exclusions={}, third_party_data=VALID_DATA))  # fmt: skip
            actors.append(Actor(u.id, u.username, Role.PATIENT, u.display_name, patient_id=p.id))
    return actors


async def test_fifty_patients_accept_one_time_at_once_and_exactly_one_wins(client, login, demo, runtime, clock):
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    patients = await crowd(runtime, clock.now())
    for actor in patients:
        await entries.join(runtime, actor, slot.form())
    await cancel(client, await login("patient4"), slot.appointment_id)
    assert (await run_round(runtime)).offered == CROWD
    async with runtime.db.read() as s:
        offer_of = dict((await s.execute(select(WaitlistOffer.patient_id, WaitlistOffer.id))).all())
    events = Events(runtime)

    async def accept(actor: Actor) -> object:
        # A patient's app answered "busy, nothing changed" (every pooled connection in use past the pool's wait,
        # on a loaded machine) asks again after Retry-After, as the clients do.
        while True:
            try:
                return await accepting.accept(runtime, actor, offer_of[actor.patient_id])
            except AppointmentChanged as refused:
                return refused
            except ServiceBusy as busy:
                await asyncio.sleep(busy.retry_after or 1)

    answers = await asyncio.gather(*(accept(a) for a in patients))
    won = [a for a in answers if isinstance(a, accepting.Accepted)]
    lost = [a for a in answers if isinstance(a, AppointmentChanged)]
    assert (len(won), len(lost)) == (1, CROWD - 1)
    assert all(e.code == "APPOINTMENT_CHANGED" for e in lost)
    async with runtime.db.read() as s:
        placed = await s.scalar(
            select(func.count())
            .select_from(Appointment)
            .where(Appointment.start_at == slot.start, Appointment.status == Status.REQUESTED)
        )
        states = dict((await s.execute(select(WaitlistOffer.state, func.count()).group_by(WaitlistOffer.state))).all())
    assert placed == 1
    assert states == {"accepted": 1, "gone": CROWD - 1}
    told = {e.data["patient_id"] for e in events.seen if e.kind == "waitlist.gone"}
    (winner,) = [a.patient_id for a, answer in zip(patients, answers, strict=True) if answer in won]
    assert len(told) == CROWD - 1 and winner not in told
