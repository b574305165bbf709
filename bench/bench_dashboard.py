"""The dashboard's PUT (docs/dashboard.md) with 5,000 and 100,000 appointments in the clinic: the admin's whole
clinic and doctor1's own, each with its figures computed afresh (the per-scope hold emptied before every request),
and the admin's PUT within the hold (figures kept) for comparison. Each case has the same 3,000 appointments in the
last 120 days (requests, decisions, bookings, no-shows and cancellations by the patient), the rest is history years
before: only the size of the clinic changes between cases, so the indexes of migration dashboard_0001 should keep
the time flat.

Runs the app in-process (httpx ASGI transport, no network), one fresh database per case, the cases interleaved.
SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server database.

    python -m bench dashboard            (or: make bench BENCH=dashboard)
    DOCTORDESK_BENCH_DASHBOARD_SIZES=4000,20000 DOCTORDESK_BENCH_REQUESTS=10 python -m bench dashboard  (smoke)
Target: each cold PUT's p50 at the largest size / at the smallest ≤ 1.5.
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

import httpx
from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import async_sessionmaker
from tests.support.appointments import appointment_row

from bench.common import percentile, table
from bench.suites import on_each_database, reported
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.services.dashboard.screen import CACHE
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment, AppointmentHistory

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
SIZES = tuple(int(n) for n in os.environ.get("DOCTORDESK_BENCH_DASHBOARD_SIZES", "5000,100000").split(","))
REQUESTS = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "30"))
WARMUP = 3
RECENT = 3000
SCREENS = ("admin, computed", "doctor, computed", "admin, held")
R, A, D, C = Status.REQUESTED, Status.APPROVED, Status.DECLINED, Status.CANCELED


@dataclass
class Case:
    url: str
    appointments: int
    ms: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SCREENS})


def _story(i: int, created: datetime) -> tuple[Status, datetime, list[tuple[Status | None, Status, datetime, Any]]]:
    """Appointment ``i``'s status, start and history: mostly booked and kept, some declined, no-shows and cancels."""
    start = created + timedelta(days=3 + i % 11, hours=i % 7)
    decided = created + timedelta(minutes=30 + (i * 37) % 2880)
    kind = i % 20
    if kind == 0:
        return D, start, [(R, D, decided, {})]
    history: list[tuple[Status | None, Status, datetime, Any]] = [(R, A, decided, {})]
    if kind == 1:
        history.append((A, C, start - timedelta(hours=(i % 48) + 1), {"action": "cancel", "by": "patient"}))
        return C, start, history
    if start >= NOW:
        return A, start, history
    return (Status.NO_SHOW if kind == 2 else Status.COMPLETED), start, history


async def _prepare(url: str, appointments: int) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
        doctors = [demo.users[d] for d in ("doctor1", "doctor2", "doctor3")]
        patient, berlin = demo.patients["patient1"], demo.locations["berlin"]
        for chunk in range(0, appointments, 5000):
            rows, stories = [], []
            for i in range(chunk, min(chunk + 5000, appointments)):
                recent = i < RECENT
                created = NOW - (timedelta(minutes=57 * i) if recent else timedelta(days=400, minutes=29 * i))
                status, start, history = _story(i, created)
                row = appointment_row(patient_id=patient, doctor_id=doctors[i % 3], location_id=berlin, start=start,
                                      status=status, now=created)  # fmt: skip
                rows.append(row)
                stories.append(history)
            ids = (await session.scalars(insert(Appointment).returning(Appointment.id), rows)).all()
            history_rows = [
                {"appointment_id": a, "at": at, "actor_id": None, "from_status": int(f) if f else None,
                 "to_status": int(t), "details": details or {}}
                for a, story in zip(ids, stories, strict=True) for f, t, at, details in story
            ]  # fmt: skip
            await session.execute(insert(AppointmentHistory), history_rows)
        assert await session.scalar(select(Appointment.id).limit(1)) is not None
    if engine.dialect.name == "postgresql":
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    await engine.dispose()


async def _client(stack: AsyncExitStack, url: str, tmp: Path) -> tuple[httpx.AsyncClient, Any, dict[str, str]]:
    settings = Settings(database_url=url, data_dir=tmp, argon2_time_cost=1, argon2_memory_kib=1024, push_adapter="none")
    app = create_app(settings, clock=FixedClock(NOW))
    await stack.enter_async_context(app.router.lifespan_context(app))
    client = await stack.enter_async_context(
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")
    )
    headers = {}
    for username in ("admin", "doctor1"):
        login = await client.post("/auth/login", data={"username": username, "password": "demo"})
        headers[username] = f"Bearer {login.json()['access_token']}"
    return client, app.state.runtime, headers


async def _measure(cases: list[Case], tmp: Path) -> None:
    async with AsyncExitStack() as stack:
        clients = [(case, *await _client(stack, case.url, tmp)) for case in cases]
        for i in range(REQUESTS + WARMUP):
            for case, client, rt, headers in clients:
                for name in SCREENS:
                    url, who = ("/profile/dashboard", "doctor1") if name.startswith("doctor") else (
                        "/profile/admin/dashboard", "admin")  # fmt: skip
                    if name.endswith("computed"):
                        rt.caches.pop(CACHE, None)
                    t0 = time.perf_counter()
                    page = await client.put(url, headers={"Authorization": headers[who]})
                    elapsed = (time.perf_counter() - t0) * 1000
                    if page.status_code != 200:
                        raise SystemExit(f"{case.appointments} {name}: unexpected {page.text[:300]}")
                    if i >= WARMUP:
                        case.ms[name].append(elapsed)


async def _suite(_label: str, urls: list[str], tmp: Path) -> list[Case]:
    cases = [Case(url, n) for url, n in zip(urls, SIZES, strict=True)]
    for case in cases:
        await _prepare(case.url, case.appointments)
    await _measure(cases, tmp)
    return cases


def _report(name: str, cases: list[Case]) -> bool:
    print(f"\n{name}: the dashboard's PUT, {RECENT:,} appointments in the last 120 days ({REQUESTS} requests per case)")
    rows = [
        (screen, f"{c.appointments:,}", percentile(c.ms[screen], 50), percentile(c.ms[screen], 99))
        for screen in SCREENS
        for c in cases
    ]
    print(table(["PUT", "appointments", "p50 ms", "p99 ms"], rows))
    small, large = cases[0], cases[-1]
    ok = True
    for screen in SCREENS[:2]:
        ratio = percentile(large.ms[screen], 50) / percentile(small.ms[screen], 50)
        met = ratio <= 1.5
        ok = ok and met
        print(f"{screen}: p50 {large.appointments:,} / {small.appointments:,} = {ratio:.2f} (target ≤ 1.5): "
              f"{'met' if met else 'MISSED'}")  # fmt: skip
    return ok


def main() -> int:
    """Run the benchmark and print the tables; exit status 1 when a target is missed."""
    return reported(on_each_database("dashboard", SIZES, _suite), _report)


if __name__ == "__main__":
    sys.exit(main())
