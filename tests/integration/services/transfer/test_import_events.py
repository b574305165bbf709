"""An import tells the serving processes what it changed (docs/import.md, docs/realtime.md): it stages its events
in the database in its own transaction, a serving process publishes them on its bus, and an open list that would
otherwise hold until the safety net shows the imported appointment at its next poll."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    CLINIC_CHANGED,
    CLINIC_TOPIC,
    DomainEvent,
    appointment_topic,
    doctor_topic,
    patient_topic,
)
from doctordesk.realtime import relay
from doctordesk.services.transfer.import_events import IMPORTED
from doctordesk.services.transfer.import_files import read_rows
from doctordesk.services.transfer.importing import import_rows
from doctordesk.store.db import Database
from doctordesk.store.realtime_tables import RelayedEvent
from doctordesk.store.tables import Appointment, Location, Patient, User

LOCATION = {"external_id": "L-9", "name": "Harbour", "timezone": "Europe/Berlin"}
PATIENT = {"external_id": "P-9", "name": "Greta Imported"}


@pytest.fixture
def settings(database_url, settings_factory):
    # The tests relay by hand: the serving process relays nothing itself.
    return settings_factory(database_url, relay_seconds=0)


async def _import(db: Database, tmp_path: Path, content: dict, *, name: str = "file.json", **options):
    path = tmp_path / name
    path.write_text(json.dumps(content), encoding="utf-8")
    return await import_rows(db, read_rows(path), source=name, now=datetime.now(UTC), **options)


async def _staged(db: Database) -> list[tuple[str, set[str]]]:
    async with db.read() as session:
        rows = (await session.execute(select(RelayedEvent.kind, RelayedEvent.topics).order_by(RelayedEvent.id))).all()
    return [(kind, set(topics.split("\n"))) for kind, topics in rows]


async def _name_doctors(db: Database, demo) -> None:
    """External ids for two demo doctors, so a file can refer to them."""
    async with db.transaction() as session:
        for username in ("doctor1", "doctor2"):
            await session.execute(
                update(User).where(User.id == demo.users[username]).values(external_id=f"D-{username}")
            )


def _appointment(start, *, doctor: str = "D-doctor1", status: str = "approved") -> dict:
    return {
        "external_id": "A-9",
        "patient": "P-9",
        "doctor": doctor,
        "location": "L-9",
        "start": start.isoformat(),
        "duration_minutes": 30,
        "status": status,
    }


async def _ids(db: Database) -> tuple[int, int]:
    async with db.read() as session:
        appointment = await session.scalar(select(Appointment.id).where(Appointment.external_id == "A-9"))
        patient = await session.scalar(select(Patient.id).where(Patient.external_id == "P-9"))
    assert appointment is not None and patient is not None
    return appointment, patient


async def test_an_import_stages_the_clinic_change_and_its_appointments_topics(runtime, demo, clock, tmp_path):
    db = runtime.db
    await _name_doctors(db, demo)
    start = clock.now() + timedelta(days=2)
    file = {"locations": [LOCATION], "patients": [PATIENT], "appointments": [_appointment(start)]}
    report = await _import(db, tmp_path, file)
    assert report.written and report.changes == 3
    appointment, patient = await _ids(db)
    assert await _staged(db) == [
        (CLINIC_CHANGED, {CLINIC_TOPIC}),
        (
            IMPORTED,
            {
                ALL_APPOINTMENTS_TOPIC,
                appointment_topic(appointment),
                doctor_topic(demo.users["doctor1"]),
                patient_topic(patient),
            },
        ),
    ]


async def test_an_appointment_moved_to_another_doctor_is_staged_on_both(runtime, demo, clock, tmp_path):
    db = runtime.db
    await _name_doctors(db, demo)
    start = clock.now() + timedelta(days=2)
    await _import(db, tmp_path, {"locations": [LOCATION], "patients": [PATIENT], "appointments": [_appointment(start)]})
    async with db.transaction() as session:
        await session.execute(RelayedEvent.__table__.delete())
    report = await _import(db, tmp_path, {"appointments": [_appointment(start, doctor="D-doctor2")]}, name="moved.json")
    assert report.changes == 1
    [(kind, topics)] = await _staged(db)  # appointments only: no clinic.changed
    assert kind == IMPORTED
    assert {doctor_topic(demo.users["doctor1"]), doctor_topic(demo.users["doctor2"])} <= topics


async def test_a_run_that_changes_nothing_a_dry_run_and_a_refused_file_stage_nothing(runtime, demo, clock, tmp_path):
    db = runtime.db
    await _name_doctors(db, demo)
    file = {"locations": [LOCATION], "patients": [PATIENT], "appointments": [_appointment(clock.now())]}
    dry = await _import(db, tmp_path, file, dry_run=True)
    assert dry.changes == 3 and not dry.written
    assert await _staged(db) == []
    bad = {**file, "appointments": [{**_appointment(clock.now()), "doctor": "D-nobody"}]}
    refused = await _import(db, tmp_path, bad, name="bad.json")
    assert refused.bad_rows and not refused.written
    assert await _staged(db) == []
    await _import(db, tmp_path, file)
    async with db.transaction() as session:
        await session.execute(RelayedEvent.__table__.delete())
    again = await _import(db, tmp_path, file, name="again.json")
    assert again.changes == 0 and again.written
    assert await _staged(db) == []


async def test_a_serving_process_publishes_each_staged_event_once_and_keeps_them_when_publishing_fails(runtime):
    db = runtime.db
    async with db.transaction() as session:
        await relay.stage(
            session,
            [DomainEvent(EventKind.CLINIC_CHANGED, ("doctor:1", "clinic")), DomainEvent(EventKind.ADMIN_CHANGED, ())],
            now=datetime.now(UTC),
        )
    published: list[DomainEvent] = []

    async def failing(events: Sequence[DomainEvent]) -> None:
        raise ConnectionError("bus away")

    with pytest.raises(ConnectionError):
        await relay.relay_staged(db, failing)
    assert await _staged(db) == [("clinic.changed", {"doctor:1", "clinic"})]  # an event without topics is not staged

    async def slow(events: Sequence[DomainEvent]) -> None:
        await asyncio.sleep(0.05)  # the claim is held while publishing: a second process's claim waits for it
        published.extend(events)

    second_db = Database(runtime.settings.database_url)
    try:
        counts = await asyncio.gather(relay.relay_staged(db, slow), relay.relay_staged(second_db, slow))
    finally:
        await second_db.dispose()
    assert sorted(counts) == [0, 1]
    assert [(e.kind, e.topics) for e in published] == [("clinic.changed", ("doctor:1", "clinic"))]
    assert await _staged(db) == []


async def test_the_relay_round_publishes_what_was_staged_until_it_is_stopped(runtime):
    async with runtime.db.transaction() as session:
        await relay.stage(session, [DomainEvent(EventKind.CLINIC_CHANGED, ("doctor:1",))], now=datetime.now(UTC))
    arrived = asyncio.Event()
    published: list[DomainEvent] = []

    async def publish(events: Sequence[DomainEvent]) -> None:
        published.extend(events)
        arrived.set()

    stopping = asyncio.Event()
    rounds = asyncio.create_task(relay.run(runtime.db, publish, every=0.01, stopping=stopping))
    async with asyncio.timeout(10):
        await arrived.wait()
    stopping.set()
    async with asyncio.timeout(10):
        await rounds
    assert [e.kind for e in published] == [EventKind.CLINIC_CHANGED]


async def test_an_open_list_shows_an_imported_appointment_at_its_next_poll_once_relayed(
    client, login, runtime, demo, clock, tmp_path
):
    await _name_doctors(runtime.db, demo)
    doctor = await login("doctor1")
    page = await client.put("/profile/appointments", headers=doctor.headers)
    state = page.json()["state"]
    start = clock.now() + timedelta(days=1)
    await _import(
        runtime.db, tmp_path, {"locations": [LOCATION], "patients": [PATIENT], "appointments": [_appointment(start)]}
    )

    held = await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": state})
    assert held.status_code == 200 and held.json()["state"] == state  # nothing told this process yet

    assert await relay.relay_staged(runtime.db, runtime.publish) == 2
    polled = await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": state})
    assert polled.status_code == 200 and polled.json()["state"] != state
    assert "Greta Imported" in json.dumps(polled.json())
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(RelayedEvent)) == 0
        assert await session.scalar(select(Location.id).where(Location.external_id == "L-9")) is not None
