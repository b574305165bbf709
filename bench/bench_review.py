"""POST approve with three alternatives: throughput and p50/p99 latency for a doctor with 100 and with 10,000
existing appointments (the overlap check must read an index range, not the doctor's history).

Runs the app in-process (httpx ASGI transport, no network) on fresh SQLite files, one per case, with the cases
interleaved (one request of each in turn, so the machine's drift falls on all alike), and on PostgreSQL too when
``DOCTORDESK_BENCH_POSTGRES_URL`` names a server to create a database of its own on (one database, dropped afterwards:
the cases run one after the other, each emptying it first).
Baseline, measured in the same run: approving a request as proposed (no alternatives) for the doctor with 100
appointments.

    python -m bench.bench_review            (or: make bench)
Targets: p99 ≤ 20 ms; p99(10,000) / p99(100) ≤ 1.5.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import insert, select, text
from tests.support.appointments import appointment_row

from bench.common import Percentiles, machine, table
from bench.suites import on_each_database, signed_in_client
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
BERLIN = ZoneInfo("Europe/Berlin")
REQUESTS = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "300"))
WARMUP = 20
MORNING_SLOTS = 8  # existing appointments fill 08:00-12:00; the alternatives go to the afternoon


@dataclass
class Result(Percentiles):
    label: str
    n: int
    seconds: float
    latencies_ms: list[float]
    cpu_ms: float  # process CPU time per request (all threads: robust against other load on the machine)

    @property
    def throughput(self) -> float:
        return self.n / self.seconds


def _weekdays(start: date, count: int) -> list[date]:
    days, day = [], start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN).astimezone(UTC)


async def _prepare(url: str, existing: int, requests: int) -> tuple[list[int], list[date], int, int]:
    """Seed the demo clinic, give doctor1 ``existing`` approved appointments (mornings, past and future) and
    ``requests`` fresh requests to decide. Returns the request ids, the afternoon days to propose, and ids."""
    engine = create_engine(url)
    if engine.dialect.name == "postgresql":
        async with engine.begin() as conn:
            await conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
    await upgrade(engine)
    from sqlalchemy.ext.asyncio import async_sessionmaker

    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
        doctor, berlin, patient = demo.users["doctor1"], demo.locations["berlin"], demo.patients["patient1"]

        def row(start: datetime, status: Status) -> dict[str, Any]:
            """A 30-minute consultation of doctor1 with patient1 in Berlin."""
            return appointment_row(
                patient_id=patient, doctor_id=doctor, location_id=berlin, start=start, status=status, now=NOW
            )

        days_needed = existing // MORNING_SLOTS + 1
        # Half of the history lies in the past, half in the future, around the days the alternatives go to.
        all_days = _weekdays(NOW.date() - timedelta(days=days_needed * 7 // 10), days_needed)
        rows: list[dict[str, Any]] = []
        for i in range(existing):
            day = all_days[i // MORNING_SLOTS]
            start = _at(day, 8 + (i % MORNING_SLOTS) // 2, 30 * (i % 2))
            rows.append(row(start, Status.APPROVED if start > NOW else Status.COMPLETED))
        for chunk in range(0, len(rows), 2000):
            await session.execute(insert(Appointment), rows[chunk : chunk + 2000])
        first = _weekdays(NOW.date() + timedelta(days=1), 1)[0]
        decide_days = _weekdays(first, requests)
        request_rows = [row(_at(day, 16, 30), Status.REQUESTED) for day in decide_days]
        await session.execute(insert(Appointment), request_rows)
        ids = (
            (
                await session.execute(
                    select(Appointment.id)
                    .where(
                        Appointment.status == int(Status.REQUESTED),
                        Appointment.start_at >= _at(first, 16, 30),
                        Appointment.doctor_id == doctor,
                    )
                    .order_by(Appointment.start_at)
                )
            )
            .scalars()
            .all()
        )
        ids = [i for i in ids if i not in demo.appointments]
    if engine.dialect.name == "postgresql":
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    else:
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    await engine.dispose()
    return list(ids), decide_days, doctor, berlin


@dataclass
class Case:
    """One measured case: its own database and app, the requests it decides, and what it measured."""

    label: str
    existing: int
    alternatives: bool
    ids: list[int]
    days: list[date]
    doctor: int
    location: int
    latencies_ms: list[float]
    cpu_s: float = 0.0

    def form(self, i: int) -> dict[str, str]:
        form = {"version": "1"}
        if self.alternatives:
            for n, hour in enumerate((13, 14, 15), start=1):  # at :30, clear of the demo rows
                form.update(
                    {
                        f"profile~{n}": str(self.doctor),
                        f"location~{n}": str(self.location),
                        f"date~{n}": self.days[i].isoformat(),
                        f"time~{n}": f"{hour}:30",
                    }
                )
        return form


CASES = (
    (100, False, "baseline: approve as proposed, 100 appointments"),
    (100, True, "approve with 3 alternatives, 100 appointments"),
    (10_000, True, "approve with 3 alternatives, 10,000 appointments"),
)


async def _suite(name: str, urls: list[str], tmp: Path) -> list[Result]:
    """With a database per case (SQLite files) the cases run interleaved, one request of each in turn, so the
    machine's drift and hiccups fall on all of them alike; with one database (PostgreSQL) one after the other."""
    total = REQUESTS + WARMUP
    results: list[Result] = []
    pending: list[tuple[Case, str]] = []
    for n, (existing, alternatives, label) in enumerate(CASES):
        url = urls[n % len(urls)]
        ids, days, doctor, berlin = await _prepare(url, existing, total)
        pending.append((Case(f"{name}: {label}", existing, alternatives, ids, days, doctor, berlin, []), url))
        if len(urls) == 1:
            results.extend(await _measure(pending, tmp))
            pending = []
    return results + (await _measure(pending, tmp) if pending else [])


async def _measure(cases: list[tuple[Case, str]], tmp: Path) -> list[Result]:
    async with AsyncExitStack() as stack:
        clients = []
        for case, url in cases:
            clients.append((case, *await signed_in_client(stack, url, tmp, NOW)))
        for i in range(REQUESTS + WARMUP):
            for case, client, headers in clients:
                cpu0, t0 = time.process_time(), time.perf_counter()
                response = await client.post(
                    f"/profile/appointments/{case.ids[i]}/approve", data=case.form(i), headers=headers
                )
                elapsed = (time.perf_counter() - t0) * 1000
                if response.status_code != 200:
                    raise SystemExit(f"{case.label}: unexpected {response.status_code} {response.text}")
                if i >= WARMUP:
                    case.latencies_ms.append(elapsed)
                    case.cpu_s += time.process_time() - cpu0
    # Interleaved cases share the wall clock: each one's throughput is its requests over the sum of its latencies.
    return [
        Result(c.label, len(c.latencies_ms), sum(c.latencies_ms) / 1000, c.latencies_ms, c.cpu_s * 1000 / REQUESTS)
        for c, _ in cases
    ]


def _table(results: list[Result]) -> str:
    rows = [(r.label, r.n, f"{r.throughput:.1f}", r.p50, r.p99, r.cpu_ms) for r in results]
    return table(["case", "n", "req/s", "p50 ms", "p99 ms", "cpu ms"], rows)


def main() -> int:
    """Run the benchmark and print the table; exit status 1 when a target is missed."""
    suites = [results for _, results in on_each_database("review", range(len(CASES)), _suite, one_postgres=True)]
    ok = True
    print("Review and Approve: POST /profile/appointments/{id}/approve")
    print(f"machine: {machine()}")
    for results in suites:
        print(_table(results))
        small, large = results[1], results[2]
        ratio = large.p99 / small.p99
        p50_ratio = large.p50 / small.p50
        verdict = large.p99 <= 20 and small.p99 <= 20 and ratio <= 1.5
        ok = ok and verdict
        print(
            f"p99 10,000 / 100 = {ratio:.2f}, p50 ratio {p50_ratio:.2f} (target ≤ 1.5); "
            f"p99 ≤ 20 ms: {'met' if verdict else 'MISSED'}\n"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
