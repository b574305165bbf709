"""Fee rules edited by an admin with an effective date, used by Review and Approve, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment
from tests.integration.admin.support import audit_rows, counts
from tests.support.errors import assert_error
from tests.support.review import REQUESTED, aid, approve_url, card


async def offer_fee(runtime, appointment_id):
    async with runtime.db.read() as session:
        offer = (
            await session.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == appointment_id))
        ).scalar_one()
    return offer.doctor_fee_cents, offer.total_fee_cents


async def propose(client, headers, appointment_id, doctor_id, location_id, at="10:00"):
    fields = {**card(1, doctor_id, location_id, "2026-12-01", at), "version": "1"}  # a Tuesday morning
    response = await client.post(approve_url(appointment_id), headers=headers, data=fields)
    assert response.status_code < 400, response.text


async def second_request(runtime, demo, first_id):
    async with runtime.db.transaction() as session:
        first = await session.get(Appointment, first_id)
        row = Appointment(
            patient_id=first.patient_id, doctor_id=first.doctor_id, location_id=first.location_id,
            start_at=first.start_at + timedelta(days=1), duration_minutes=first.duration_minutes,
            status=int(Status.REQUESTED), created_at=demo.now, updated_at=demo.now,
        )  # fmt: skip
        session.add(row)
        await session.flush()
        return row.id


async def test_a_fee_change_applies_to_later_proposals_and_offers_keep_the_fee_shown(
    client, login, demo, runtime, clock
):
    admin, doctor = await login("admin"), await login("doctor1")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    first = aid(demo, REQUESTED)
    second = await second_request(runtime, demo, first)
    await propose(client, doctor.headers, first, doctor_id, berlin)
    assert await offer_fee(runtime, first) == (6000, 7500)

    tomorrow = clock.now() + timedelta(days=1)
    rule = {"kind": "doctor_fee", "doctor_id": doctor_id, "location_id": berlin, "amount_cents": 9000,
            "effective_from": tomorrow.isoformat()}  # fmt: skip
    response = await client.post("/admin/fees", json=rule, headers=admin.headers)
    assert response.status_code == 201, response.text
    [row] = await audit_rows(runtime, "admin.fee-rule-added")
    assert row.details["before"]["amount_cents"] == 6000 and row.details["after"]["amount_cents"] == 9000

    in_force = (await client.get("/admin/fees", headers=admin.headers)).json()["rules"]
    assert 9000 not in [r["amount_cents"] for r in in_force]  # not yet
    later = (await client.get("/admin/fees", params={"at": tomorrow.isoformat()}, headers=admin.headers)).json()
    assert 9000 in [r["amount_cents"] for r in later["rules"]] and 6000 not in [
        r["amount_cents"] for r in later["rules"]
    ]

    clock.advance(timedelta(days=1))
    admin, doctor = await login("admin"), await login("doctor1")  # yesterday's tokens have expired
    await propose(client, doctor.headers, second, doctor_id, berlin, at="11:00")
    assert await offer_fee(runtime, second) == (9000, 10500)
    assert await offer_fee(runtime, first) == (6000, 7500)  # history keeps the fee that was shown
    history = (await client.get("/admin/fees", params={"history": "true"}, headers=admin.headers)).json()["rules"]
    assert {6000, 9000} <= {r["amount_cents"] for r in history}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "bonus", "amount_cents": 1}, "kind"),
        # An empty version never records a free fee: the amount, or the percentage, is required.
        ({"kind": "doctor_fee"}, "amount_cents"),
        ({"kind": "location_fee", "location_id": 1}, "amount_cents"),
        ({"kind": "weekend"}, "percent"),
        ({"kind": "doctor_fee", "amount_cents": -1}, "amount_cents"),
        ({"kind": "doctor_fee", "amount_cents": 100, "percent": 5}, "percent"),
        ({"kind": "weekend", "percent": 20, "amount_cents": 100}, "amount_cents"),
        ({"kind": "doctor_fee", "amount_cents": 100, "currency": "eur"}, "currency"),
        ({"kind": "doctor_fee", "amount_cents": 100, "effective_from": "2020-01-01T00:00:00Z"}, "effective_from"),
        ({"kind": "doctor_fee", "amount_cents": 100, "effective_from": "2030-01-01T00:00:00"}, "effective_from"),
        ({"kind": "doctor_fee", "amount_cents": 100, "doctor_id": 99999}, "doctor_id"),
        ({"kind": "doctor_fee", "amount_cents": 100, "location_id": 99999}, "location_id"),
        ({"kind": "doctor_fee", "amount_cents": 100, "note": "x"}, "note"),
    ],
)
async def test_invalid_fee_rules_are_refused_naming_the_field_and_write_nothing(client, login, runtime, body, field):
    admin = await login("admin")
    before = await counts(runtime)
    response = await client.post("/admin/fees", json=body, headers=admin.headers)
    assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await counts(runtime) == before
    assert (await client.get("/admin/fees", params={"history": "true"}, headers=admin.headers)).json()["rules"]


async def test_a_fee_of_nothing_is_recorded_only_when_said_so(client, login):
    admin = await login("admin")
    response = await client.post("/admin/fees", json={"kind": "doctor_fee", "amount_cents": 0}, headers=admin.headers)
    assert response.status_code == 201, response.text
    assert response.json()["amount_cents"] == 0
    ended = await client.post("/admin/fees", json={"kind": "weekend", "retired": True}, headers=admin.headers)
    assert ended.status_code == 201, ended.text  # ending a rule needs no amount


async def test_doctors_cannot_edit_fees(client, login):
    doctor = await login("doctor1")
    response = await client.post("/admin/fees", json={"kind": "doctor_fee", "amount_cents": 1}, headers=doctor.headers)
    assert_error(response, 403, "FORBIDDEN")
