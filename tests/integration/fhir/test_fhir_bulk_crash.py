"""An export survives ``kill -9``: a ``doctordesk worker`` killed in the middle of writing a job leaves its claim
to lapse; the next exporter writes the job again from the start in a directory of its own, and the files it
completes hold every resource exactly once; the killed claim's partial files are gone. A claim that stalled past
its lease writes nothing more once it wakes, and never touches the files of the claim after it (SQLite and
PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, select, update

from doctordesk.config import Settings
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock, ShiftedClock
from doctordesk.services.fhir.bulk import jobs, writer
from doctordesk.store.fhir_tables import BulkJob
from doctordesk.store.tables import Appointment
from doctordesk.workers.bulk_exporter import BulkExporter
from tests.support import processes
from tests.support.appointments import appointment_row
from tests.support.bulk import kick_off
from tests.support.fhir_models import validate

MORE = 4000  # appointments added to the demo's, so the job spans hundreds of pages
PAGE = 10
LEASE_SECONDS = 5


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url, bulk_in_process=False, bulk_page_size=PAGE, bulk_lease_seconds=LEASE_SECONDS)


async def _progress(runtime) -> tuple[int, str | None, str]:
    async with runtime.db.read() as s:
        job = await s.scalar(select(BulkJob))
    assert job is not None
    return job.attempts, job.progress, job.status


async def test_a_worker_killed_mid_export_leaves_a_job_the_next_exporter_completes_exactly_once(
    client, runtime, login, demo, settings, database_url, clock, tmp_path
):
    now = clock.now()
    rows = [
        appointment_row(
            patient_id=demo.patients["patient1"], doctor_id=demo.users["doctor1"], location_id=demo.locations["berlin"],
            start=now - timedelta(days=400) + timedelta(minutes=30 * i), status=Status.COMPLETED,
            now=now - timedelta(days=1),  # settled well before the kick-off (docs/fhir.md, transaction time)
        )
        for i in range(MORE)
    ]  # fmt: skip
    async with runtime.db.transaction() as s:
        await s.execute(insert(Appointment), rows)
    admin = await login("admin")
    status_url = await kick_off(client, admin.headers, _type="Patient,Appointment")
    async with runtime.db.transaction() as s:
        # Due at the system clock's time: the worker runs on it.
        await s.execute(update(BulkJob).values(next_attempt_at=datetime.now(UTC) - timedelta(seconds=1)))
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),
        "DOCTORDESK_BULK_PAGE_SIZE": str(PAGE),
        "DOCTORDESK_BULK_LEASE_SECONDS": str(LEASE_SECONDS),
        "DOCTORDESK_BULK_POLL_SECONDS": "0.05",
    }
    worker = processes.launch(["doctordesk", "worker"], env, tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 120
        while True:
            attempts, progress, status = await _progress(runtime)
            assert status == "pending", (progress, (tmp_path / "worker.log").read_text())
            if progress and progress.startswith("Appointment: "):
                break  # in the middle of the appointments
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            await asyncio.sleep(0.01)
    finally:
        worker.kill()  # SIGKILL: the lease and the half-written files stay as they were
        await worker.finished(30)
    assert attempts == 1
    # The status URL tells the client how far the job got: the type being written and how many so far.
    _, progress, _ = await _progress(runtime)
    waiting = await client.get(status_url, headers=admin.headers)
    assert waiting.status_code == 202 and int(waiting.headers["retry-after"]) > 0
    assert progress is not None and progress.startswith("Appointment: ")
    assert waiting.headers["x-progress"] == progress
    killed = jobs.job_dir(settings, (await _job_id(runtime))) / "1"
    assert (killed / "Appointment.ndjson").exists()
    # An exporter whose clock is past the lease takes the job over (no waiting).
    later = ShiftedClock(datetime.now(UTC) + timedelta(seconds=LEASE_SECONDS + 1))
    await BulkExporter(runtime.db, settings=settings, clock=later).drain()
    async with runtime.db.read() as s:
        job = await s.scalar(select(BulkJob))
        expected = Counter(str(i) for i in (await s.scalars(select(Appointment.id))).all())
    assert job is not None and job.status == "complete" and job.attempts == 2
    assert [o["path"] for o in job.output] == ["2/Patient.ndjson", "2/Appointment.ndjson"]
    assert not killed.exists()
    written: Counter[str] = Counter()
    for line in (jobs.job_dir(settings, job.id) / "2" / "Appointment.ndjson").read_text().splitlines():
        resource = json.loads(line)
        validate(resource)
        written[resource["id"]] += 1
    assert written == expected  # every appointment, each exactly once


async def _job_id(runtime) -> int:
    async with runtime.db.read() as s:
        job_id = await s.scalar(select(BulkJob.id))
    assert job_id is not None
    return int(job_id)


async def test_a_claim_that_lost_its_lease_writes_nothing_more_and_leaves_the_new_claims_files_alone(
    client, runtime, login, settings, clock
):
    admin = await login("admin")
    await kick_off(client, admin.headers, _type="Patient,Appointment")
    first = await writer.claim(runtime.db, now=clock.now(), settings=settings)
    assert first is not None and first.attempt == 1
    assert await writer.claim(runtime.db, now=clock.now(), settings=settings) is None  # leased: nobody else
    # The first claim stalls past its lease; another exporter takes the job and completes it.
    past = FixedClock(clock.now() + timedelta(seconds=LEASE_SECONDS + 1))
    second = await writer.claim(runtime.db, now=past.now(), settings=settings)
    assert second is not None and second.attempt == 2
    assert await writer.run(runtime.db, second, settings=settings, clock=past)
    done = jobs.job_dir(settings, second.job_id) / "2"
    before = {p.name: p.read_bytes() for p in done.iterdir()}
    # The stalled claim wakes up: its first renewal fails, it stops and drops only its own directory.
    assert not await writer.run(runtime.db, first, settings=settings, clock=past)
    assert not (jobs.job_dir(settings, first.job_id) / "1").exists()
    assert {p.name: p.read_bytes() for p in done.iterdir()} == before
    async with runtime.db.read() as s:
        job = await s.scalar(select(BulkJob))
    assert job is not None and job.status == "complete" and job.attempts == 2
