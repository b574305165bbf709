"""Holds cannot block a doctor's week (docs/booking.md#holds): a patient holds at most
``DOCTORDESK_HOLD_PATIENT_WEEK_CAP`` times with one doctor in one week, whoever holds them for them, and a hold that
lapsed without a booking leaves its time to others for ``DOCTORDESK_HOLD_COOLDOWN_MINUTES`` before the same holder
may hold it again, so renewing cannot keep a time forever. Refusals are 422 FIELDS_VALIDATION_ERROR and hold
nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from doctordesk.config import Settings
from doctordesk.services.fhir.holds import HOLD_MINUTES, week_of
from doctordesk.store.fhir_tables import SlotHold
from tests.integration.fhir.test_fhir_scheduling import find, operation, with_patient
from tests.support.fhir import assert_outcome, resource_of
from tests.support.integration import FREE_START, make_key

COOLDOWN = 30


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(
        database_url, webhook_in_process=False, hold_patient_week_cap=2, hold_cooldown_minutes=COOLDOWN
    )


@pytest.fixture
async def admin(login):
    return await login("admin")


@pytest.fixture
async def key(client, admin):
    return await make_key(client, admin.headers)


@pytest.fixture
async def other_key(client, admin):
    return await make_key(client, admin.headers, name="another-platform")


async def _holds(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(SlotHold)) or 0)


def _diagnostics(response) -> str:
    return str(response.json()["issue"][0]["details"]["text"])


async def test_a_patient_holds_at_most_the_cap_with_one_doctor_in_a_week_whoever_holds(
    client, key, other_key, demo, runtime
):
    found = await find(client, key.headers, demo)
    patient1, patient2 = demo.patients["patient1"], demo.patients["patient2"]
    assert (await operation(client, key.headers, "hold", with_patient(found[0], patient1))).status_code == 200
    assert (await operation(client, other_key.headers, "hold", with_patient(found[1], patient1))).status_code == 200
    before = await _holds(runtime)
    third = await operation(client, key.headers, "hold", with_patient(found[2], patient1))
    assert_outcome(third, 422, "FIELDS_VALIDATION_ERROR")
    assert "At most 2 held times for one patient with one doctor in a week" in _diagnostics(third)
    assert await _holds(runtime) == before
    # Another patient is not counted with them.
    assert (await operation(client, key.headers, "hold", with_patient(found[2], patient2))).status_code == 200


async def test_a_held_time_in_another_week_is_not_counted(client, key, demo):
    patient1 = demo.patients["patient1"]
    this_week = await find(client, key.headers, demo)
    for proposed in this_week[:2]:
        assert (await operation(client, key.headers, "hold", with_patient(proposed, patient1))).status_code == 200
    next_week = await find(client, key.headers, demo, day="2026-12-03")
    assert next_week, "doctor1 works on Thursdays"
    assert (await operation(client, key.headers, "hold", with_patient(next_week[0], patient1))).status_code == 200


async def test_a_lapsed_hold_leaves_its_time_to_others_for_the_cool_down(client, key, other_key, demo, clock):
    [wanted] = [a for a in await find(client, key.headers, demo) if a["start"] == FREE_START]
    mine = with_patient(wanted, demo.patients["patient1"])
    assert (await operation(client, key.headers, "hold", mine)).status_code == 200
    clock.advance(timedelta(minutes=HOLD_MINUTES))  # lapsed without a booking
    again = await operation(client, key.headers, "hold", mine)
    assert_outcome(again, 422, "FIELDS_VALIDATION_ERROR")
    assert "you can hold it again from" in _diagnostics(again)
    # The time is free for everyone else meanwhile.
    theirs = with_patient(wanted, demo.patients["patient2"])
    taken = resource_of(await operation(client, other_key.headers, "hold", theirs))
    assert taken["status"] == "pending"


async def test_after_the_cool_down_the_holder_may_hold_the_time_again(client, key, demo, clock):
    [wanted] = [a for a in await find(client, key.headers, demo) if a["start"] == FREE_START]
    mine = with_patient(wanted, demo.patients["patient1"])
    assert (await operation(client, key.headers, "hold", mine)).status_code == 200
    clock.advance(timedelta(minutes=HOLD_MINUTES + COOLDOWN - 1))
    assert (await operation(client, key.headers, "hold", mine)).status_code == 422
    clock.advance(timedelta(minutes=1))
    assert (await operation(client, key.headers, "hold", mine)).status_code == 200


async def test_a_booked_hold_is_no_lapse(client, key, demo, clock):
    [wanted, other] = (await find(client, key.headers, demo))[:2]
    mine = with_patient(wanted, demo.patients["patient1"])
    held = resource_of(await operation(client, key.headers, "hold", mine))
    booked = {**mine, "extension": held["extension"][:1]}
    assert (await operation(client, key.headers, "book", booked)).status_code == 201
    clock.advance(timedelta(minutes=HOLD_MINUTES))
    # The booked time is the request's now; a neighbouring time is no lapse of this holder's either.
    assert (await operation(client, key.headers, "hold", with_patient(other, demo.patients["patient1"]))).is_success


def test_the_week_is_monday_to_sunday_in_the_locations_zone():
    lo, hi = week_of(datetime(2026, 11, 29, 22, 30, tzinfo=UTC), "Europe/Berlin")  # Sunday 23:30 in Berlin
    assert (lo, hi) == (datetime(2026, 11, 22, 23, 0, tzinfo=UTC), datetime(2026, 11, 29, 23, 0, tzinfo=UTC))
    lo, hi = week_of(datetime(2026, 11, 29, 23, 30, tzinfo=UTC), "Europe/Berlin")  # Monday 00:30 in Berlin
    assert lo == datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
    lo, hi = week_of(datetime(2026, 3, 25, 12, 0, tzinfo=UTC), "Europe/Berlin")  # the week summer time begins
    assert hi - lo == timedelta(days=7, hours=-1)
