"""The appointment list for a doctor with 100, 10,000 and 100,000 appointments (half past, half ahead, plus a few
requests): PUT of the list and the unchanged poll, p50/p99, and the size of the first page's JSON.

Runs the app in-process (httpx ASGI transport, no network), one fresh database per case, the cases interleaved
(one request of each in turn, so the machine's drift falls on all alike). SQLite always; PostgreSQL too when
``DOCTORDESK_BENCH_POSTGRES_URL`` names a server database to connect through: the benchmark creates databases of
its own there and drops them afterwards (it never touches the database named).

    python -m bench list            (or: make bench BENCH=list)
Targets: p50 of the PUT at 100,000 / at 100 ≤ 1.5; the first page's JSON the same size whatever the history.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import async_sessionmaker
from tests.support.appointments import appointment_row

from bench.common import percentile, table
from bench.suites import on_each_database, reported, signed_in_client
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
SIZES = (100, 10_000, 100_000)
REQUESTS = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "200"))
WARMUP = 20


@dataclass
class Case:
    url: str
    appointments: int
    put_ms: list[float] = field(default_factory=list)
    poll_ms: list[float] = field(default_factory=list)
    put_bytes: int = 0


async def _prepare(url: str, appointments: int) -> None:
    """The demo clinic, and doctor1 given ``appointments`` more: half behind (completed), half ahead
    (approved), every 30 minutes around the clock, and ten new requests."""
    engine = create_engine(url)
    await upgrade(engine)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)

        def row(start: datetime, status: Status) -> dict[str, Any]:
            patient, doctor, berlin = demo.patients["patient1"], demo.users["doctor1"], demo.locations["berlin"]
            return appointment_row(
                patient_id=patient, doctor_id=doctor, location_id=berlin, start=start, status=status, now=NOW
            )

        half = appointments // 2
        rows = [row(NOW - timedelta(minutes=30 * (i + 1)), Status.COMPLETED) for i in range(half)]
        rows += [row(NOW + timedelta(days=1, minutes=30 * i), Status.APPROVED) for i in range(appointments - half)]
        rows += [row(NOW + timedelta(hours=3, minutes=7 * i), Status.REQUESTED) for i in range(10)]
        for chunk in range(0, len(rows), 5000):
            await session.execute(insert(Appointment), rows[chunk : chunk + 5000])
    async with engine.begin() as conn:
        await conn.execute(text("ANALYZE"))
    await engine.dispose()


async def _measure(cases: list[Case], tmp: Path) -> None:
    async with AsyncExitStack() as stack:
        clients = []
        for case in cases:
            clients.append((case, *await signed_in_client(stack, case.url, tmp, NOW)))
        for i in range(REQUESTS + WARMUP):
            for case, client, headers in clients:
                t0 = time.perf_counter()
                page = await client.put("/profile/appointments", headers=headers)
                t1 = time.perf_counter()
                poll = await client.patch(
                    "/profile/appointments", headers={**headers, "X-Screen-State": page.json()["state"]}
                )
                t2 = time.perf_counter()
                if page.status_code != 200 or poll.status_code != 200 or poll.json()["patches"]:
                    raise SystemExit(f"{case.appointments}: unexpected {page.status_code} {poll.text[:300]}")
                if i >= WARMUP:
                    case.put_ms.append((t1 - t0) * 1000)
                    case.poll_ms.append((t2 - t1) * 1000)
                    case.put_bytes = len(page.content)


async def _suite(_label: str, urls: list[str], tmp: Path) -> list[Case]:
    cases = [Case(url, n) for url, n in zip(urls, SIZES, strict=True)]
    for case in cases:
        await _prepare(case.url, case.appointments)
    await _measure(cases, tmp)
    return cases


def _report(name: str, cases: list[Case]) -> bool:
    print(f"\n{name}: the appointment list of a doctor with a growing history ({REQUESTS} requests per case)")
    rows = [
        (f"{c.appointments:,}", percentile(c.put_ms, 50), percentile(c.put_ms, 99), f"{percentile(c.poll_ms, 50):.3f}",
         f"{percentile(c.poll_ms, 99):.3f}", f"{c.put_bytes:,}")
        for c in cases
    ]  # fmt: skip
    print(table(["appointments", "PUT p50", "PUT p99", "poll p50", "poll p99", "page bytes"], rows))
    small, large = cases[0], cases[-1]
    ratio = percentile(large.put_ms, 50) / percentile(small.put_ms, 50)
    poll_ratio = percentile(large.poll_ms, 50) / percentile(small.poll_ms, 50)
    size_ratio = large.put_bytes / small.put_bytes
    ok = ratio <= 1.5 and abs(size_ratio - 1) <= 0.05
    print(
        f"PUT p50 100,000 / 100 = {ratio:.2f} (target ≤ 1.5); unchanged poll p50 ratio {poll_ratio:.2f}; "
        f"page size ratio {size_ratio:.3f} (target 1 ± 0.05): {'met' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    """Run the benchmark and print the tables; exit status 1 when a target is missed."""
    return reported(on_each_database("list", SIZES, _suite), _report)


if __name__ == "__main__":
    sys.exit(main())
