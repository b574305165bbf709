"""FHIR bulk export (docs/fhir.md#bulk-export) of the clinic with 10,000 and with 100,000 appointments: the
exporter's peak memory, its time, and whether a second export of the same data writes the same bytes.

Each case seeds the demo clinic, one patient per ten appointments and the appointments (three doctors in turn,
every 30 minutes into the past), queues a system-level ``$export`` of every type as a kick-off does, and runs
``doctordesk worker --once`` in a process of its own, which writes the job and exits; ``/usr/bin/time`` reports the
process's peak RSS. A baseline run exporting only ``Location`` (a few lines) gives the worker's own memory, so the
growth an export adds is the difference. The same export is then queued and written again, and its files are
compared byte for byte with the first's (hashed while read, in chunks).

SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server.

    python -m bench bulk_export          (or: make bench BENCH=bulk_export)
    DOCTORDESK_BENCH_BULK_SIZES=1000,10000 python -m bench bulk_export     (a smoke run)
Targets: the growth over the baseline at the largest size ≤ 64 MiB and at most 1.5 × the growth at the smallest
(memory bounded by a page, not by the export's size); both runs' files identical.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import async_sessionmaker
from tests.support.appointments import appointment_row

from bench.common import table
from bench.suites import on_each_database, reported
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.fhir.bulk import TYPES, Level
from doctordesk.store.db import create_engine
from doctordesk.store.fhir_tables import BulkJob
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment, Patient

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
SIZES = tuple(int(n) for n in os.environ.get("DOCTORDESK_BENCH_BULK_SIZES", "10000,100000").split(","))
PATIENTS_PER_APPOINTMENT = 10
GROWTH_LIMIT_MIB = 64


@dataclass
class Case:
    url: str
    appointments: int
    baseline_kib: int = 0
    peak_kib: int = 0
    seconds: float = 0.0
    lines: int = 0
    megabytes: float = 0.0
    identical: bool = False
    digests: list[dict[str, str]] = field(default_factory=list)


async def _prepare(url: str, appointments: int) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
        doctors = [demo.users[d] for d in ("doctor1", "doctor2", "doctor3")]
        patients: list[int] = []
        count = max(1, appointments // PATIENTS_PER_APPOINTMENT)
        for chunk in range(0, count, 5000):
            rows = [{"name": f"Given{i % 50} Family{i:06d}"} for i in range(chunk, min(chunk + 5000, count))]
            patients.extend((await session.scalars(insert(Patient).returning(Patient.id), rows)).all())
        for chunk in range(0, appointments, 5000):
            rows = [
                appointment_row(
                    patient_id=patients[i % len(patients)], doctor_id=doctors[i % 3],
                    location_id=demo.locations["berlin"], start=NOW - timedelta(minutes=30 * (i + 1)),
                    status=Status.COMPLETED, now=NOW,
                )
                for i in range(chunk, min(chunk + 5000, appointments))
            ]  # fmt: skip
            await session.execute(insert(Appointment), rows)
    await engine.dispose()


async def _queue(url: str, types: tuple[str, ...]) -> int:
    """A job as the kick-off queues it (due now); its id."""
    engine = create_engine(url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    now = datetime.now(UTC)
    async with sessions() as session, session.begin():
        job = BulkJob(
            public_id=secrets.token_urlsafe(24), requester="user:1", level=Level.SYSTEM.value, group_id=None,
            types=",".join(types), since=None, request="bench", transaction_time=now, created_at=now,
            status="pending", attempts=0, next_attempt_at=now, output=[],
        )  # fmt: skip
        session.add(job)
        await session.flush()
        job_id = job.id
    await engine.dispose()
    return int(job_id)


async def _output(url: str, job_id: int) -> list[dict[str, Any]]:
    engine = create_engine(url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session:
        job = await session.scalar(select(BulkJob).where(BulkJob.id == job_id))
    await engine.dispose()
    assert job is not None and job.status == "complete", job and (job.status, job.error)
    return list(job.output)


def _worker(url: str, data_dir: Path) -> tuple[int, float]:
    """``doctordesk worker --once`` to its end: its peak RSS (KiB) and wall time."""
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": url,
        "DOCTORDESK_DATA_DIR": str(data_dir),
        "DOCTORDESK_WEBHOOK_IN_PROCESS": "false",
    }
    command = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "doctordesk.cli", "worker", "--once"]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600, check=False)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    return int(done.stderr.strip().splitlines()[-1]), elapsed


def _digests(data_dir: Path, job_id: int, output: list[dict[str, Any]]) -> dict[str, str]:
    found = {}
    for entry in output:
        digest = hashlib.sha256()
        with open(data_dir / "exports" / str(job_id) / entry["path"], "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        found[entry["type"]] = digest.hexdigest()
    return found


async def _case(case: Case, tmp: Path) -> None:
    data_dir = tmp / f"data-{case.appointments}-{secrets.token_hex(3)}"
    await _prepare(case.url, case.appointments)
    await _queue(case.url, ("Location",))
    case.baseline_kib, _ = _worker(case.url, data_dir)
    runs = []
    for _ in range(2):
        job_id = await _queue(case.url, TYPES[Level.SYSTEM])
        peak, seconds = _worker(case.url, data_dir)
        output = await _output(case.url, job_id)
        runs.append((job_id, peak, seconds, output))
    case.peak_kib = max(r[1] for r in runs)
    case.seconds = runs[0][2]
    first = runs[0]
    case.lines = sum(o["count"] for o in first[3])
    case.megabytes = sum((data_dir / "exports" / str(first[0]) / o["path"]).stat().st_size for o in first[3]) / 2**20
    case.digests = [_digests(data_dir, job_id, output) for job_id, _p, _s, output in runs]
    case.identical = case.digests[0] == case.digests[1]


async def _suite(_label: str, urls: list[str], tmp: Path) -> list[Case]:
    cases = [Case(url, n) for url, n in zip(urls, SIZES, strict=True)]
    for case in cases:
        await _case(case, tmp)
    return cases


def _report(name: str, cases: list[Case]) -> bool:
    print(f"\n{name}: FHIR bulk export of the whole clinic, `doctordesk worker --once` (peak RSS by /usr/bin/time)")
    rows = [
        (f"{c.appointments:,}", c.lines, f"{c.megabytes:.1f}", f"{c.seconds:.1f}", f"{c.lines / c.seconds:,.0f}",
         c.baseline_kib // 1024, c.peak_kib // 1024, (c.peak_kib - c.baseline_kib) // 1024,
         "yes" if c.identical else "NO")
        for c in cases
    ]  # fmt: skip
    headers = ["appointments", "lines", "MiB written", "s", "lines/s", "baseline MiB", "peak MiB", "growth MiB",
               "2nd run identical"]  # fmt: skip
    print(table(headers, rows))
    small, large = cases[0], cases[-1]
    growth_small = max(1, small.peak_kib - small.baseline_kib) / 1024
    growth_large = (large.peak_kib - large.baseline_kib) / 1024
    met = (
        growth_large <= GROWTH_LIMIT_MIB
        and growth_large <= 1.5 * max(growth_small, 8)
        and all(c.identical for c in cases)
    )
    print(
        f"growth at {large.appointments:,}: {growth_large:.0f} MiB (target ≤ {GROWTH_LIMIT_MIB}, and ≤ 1.5 × the "
        f"{small.appointments:,} case's {growth_small:.0f} MiB, floored at 8); files identical on a second run: "
        f"{all(c.identical for c in cases)}: {'met' if met else 'MISSED'}"
    )
    return met


def main() -> int:
    """Run the benchmark and print the table; exit status 1 when a target is missed."""
    return reported(on_each_database("bulk_export", SIZES, _suite), _report)


if __name__ == "__main__":
    sys.exit(main())
