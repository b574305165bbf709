"""The changed poll of the appointment list, server side: what one poll costs the service when an event on the
doctor's topic came since the client's page, so the list is rendered again, diffed against the client's page and
answered (the open loop: every change re-renders every open list of its doctor).

Two cases, demo data (doctor1), SQLite and PostgreSQL (``DOCTORDESK_BENCH_POSTGRES_URL``, a database of the
benchmark's own):
- "event, same page": an event on the doctor's topic that changes nothing the list shows (the open loop's change, a
  message the doctor sent) — render, content hash, token; the diff is skipped by the equal hash;
- "event, one row changed": one appointment's duration changes between polls (written outside the timing) — render,
  hash, diff (one update patch), token;
- "same viewer's other client, after the first": a second sign-in of doctor1 (another device) polls right after
  the first client was answered at the same revision: the render is shared (``ScreenStates.page``'s ``shares``),
  the diff from its own older page is computed;
- for scale, the unchanged poll (no event: answered from memory) — what every poll costs besides the render.

The app runs in this process and is called through ASGI directly (a minimal caller, no HTTP client and no server:
uvicorn's own HTTP parsing, the same for every request, is left out; ``bench_poll`` measures it against a bare
app). Measured per poll: CPU time of this process (``time.process_time``: every thread, so SQLite's reader thread
too; PostgreSQL's server is another process and is not counted, as in the open loop's "server CPU") and wall time,
p50/p99. ``BENCH_PROFILE=1`` profiles the polls of the "event, same page" case on SQLite with the list's reads on
the loop's thread (the default) with cProfile and prints where the time goes.

SQLite runs twice in one run, the list's reads on their connections' threads (``DOCTORDESK_DB_SQLITE_INLINE_SCREEN_
READS=0``: each call a hand-off to the thread and a wake-up of the loop) and on the loop's own thread (the default);
the table's "hand-offs" column counts the calls handed to a thread per poll, and the ratio of the CPU p50s is
printed.

    python -m bench list_changed     (or: make bench BENCH=list_changed)
Target (the open loop: ≤ 50 % of one core at 167 changed polls/s): p50 CPU ≤ 2.5 ms per changed poll.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import async_sessionmaker

from bench.common import percentile, table
from bench.suites import on_each_database, reported
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.domain.events import doctor_topic
from doctordesk.runtime import Runtime
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
POLLS = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "400"))
WARMUP = 40
TARGET_CPU_MS = 2.5
CASES = (
    "event, same page",
    "event, one row changed",
    "same viewer's other client, after the first",
    "no event (unchanged poll, for scale)",
)
LIST = "/profile/appointments"

Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


@dataclass
class Case:
    name: str
    cpu_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    patches: int = 0
    handoffs: list[int] = field(default_factory=list)  # calls handed to an aiosqlite thread, per poll


@dataclass
class Result:
    cases: list[Case]
    profile: str = ""
    rows: int = 0


async def call(app: Asgi, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    """One request to the ASGI app, without an HTTP client: its status and body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 40000),
        "server": ("bench", 80),
        "state": {},
    }
    sent = False
    status, chunks = 0, []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


async def _prepare(url: str) -> dict[str, int]:
    engine = create_engine(url)
    await upgrade(engine)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
    await engine.dispose()
    return demo.users


HANDOFFS = [0]


def _count_handoffs() -> None:
    """Count every call an aiosqlite connection hands to its thread (the inline connection runs its own)."""
    handed = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        HANDOFFS[0] += 1
        return await handed(self, fn, *args, **kwargs)

    aiosqlite.Connection._execute = counted  # type: ignore[method-assign]


async def _suite(label: str, urls: list[str], tmp: Path, inline: bool = False) -> Result:
    (url,) = urls
    users = await _prepare(url)
    doctor = users["doctor1"]
    settings = Settings(
        database_url=url, data_dir=tmp, argon2_time_cost=1, argon2_memory_kib=1024, push_adapter="none",
        db_sqlite_inline_screen_reads=inline,
    )  # fmt: skip
    app = create_app(settings, clock=FixedClock(NOW))
    result = Result([Case(name) for name in CASES])
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(app.router.lifespan_context(app))
        rt: Runtime = app.state.runtime
        form = b"username=doctor1&password=demo"
        status, body = await call(
            app, "POST", "/auth/login", {"content-type": "application/x-www-form-urlencoded"}, form
        )
        if status != 200:
            raise SystemExit(f"sign-in failed: {status} {body[:200]!r}")
        headers = {"Authorization": f"Bearer {json.loads(body)['access_token']}", "X-Client-Id": "bench-changed"}
        status, body = await call(
            app, "POST", "/auth/login", {"content-type": "application/x-www-form-urlencoded"}, form
        )
        other = {"Authorization": f"Bearer {json.loads(body)['access_token']}", "X-Client-Id": "bench-other"}
        status, body = await call(app, "PUT", LIST, headers)
        page = json.loads(body)
        state = page["state"]
        status, body = await call(app, "PUT", LIST, other)
        states = {CASES[2]: json.loads(body)["state"]}
        result.rows = sum(1 for e in _walk(page["elements"]) if e["type"] == "Row")
        engine = create_engine(url)
        stack.push_async_callback(engine.dispose)
        async with engine.begin() as conn:
            changing = await conn.scalar(
                select(Appointment.id)
                .where(Appointment.doctor_id == doctor, Appointment.status == int(Status.APPROVED))
                .where(Appointment.start_at > NOW)
                .order_by(Appointment.start_at)
                .limit(1)
            )
        profiler = cProfile.Profile() if os.environ.get("BENCH_PROFILE") and label == "SQLite inline" else None
        for i in range(POLLS + WARMUP):
            for case in [result.cases[0], result.cases[2], result.cases[1], result.cases[3]]:
                if case.name == CASES[1]:
                    async with engine.begin() as conn:
                        minutes = 45 if i % 2 else 30
                        await conn.execute(
                            update(Appointment).where(Appointment.id == changing).values(duration_minutes=minutes)
                        )
                if case.name in CASES[:2]:
                    rt.screens.revisions.bump([doctor_topic(doctor)])
                profiling = profiler is not None and i >= WARMUP and case.name == CASES[0]
                handed = HANDOFFS[0]
                c0, t0 = time.process_time(), time.perf_counter()
                if profiling:
                    assert profiler is not None
                    profiler.enable()
                client, sent = (other, states[CASES[2]]) if case.name == CASES[2] else (headers, state)
                status, body = await call(app, "PATCH", LIST, {**client, "X-Screen-State": sent})
                if profiling:
                    assert profiler is not None
                    profiler.disable()
                t1, c1 = time.perf_counter(), time.process_time()
                answer = json.loads(body)
                if status != 200 or (answer.get("state") == sent) != (case.name == CASES[3]):
                    raise SystemExit(f"{case.name}: not a changed poll: {status} {body[:300]!r}")
                if case.name == CASES[1] and i and not answer["patches"]:
                    raise SystemExit(f"{case.name}: no patches: {body[:300]!r}")
                if case.name == CASES[2]:
                    states[CASES[2]] = answer["state"]
                else:
                    state = answer["state"]
                if i >= WARMUP:
                    case.cpu_ms.append((c1 - c0) * 1000)
                    case.wall_ms.append((t1 - t0) * 1000)
                    case.patches = len(answer["patches"])
                    case.handoffs.append(HANDOFFS[0] - handed)
        if profiler is not None:
            if os.environ["BENCH_PROFILE"].endswith(".prof"):
                profiler.dump_stats(os.environ["BENCH_PROFILE"])
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("tottime").print_stats(35)
            stats.sort_stats("cumulative").print_stats(60)
            result.profile = out.getvalue()
    return result


def _walk(elements: list[dict[str, Any]]) -> Any:
    for e in elements:
        yield e
        yield from _walk(e.get("children", []))


def _report(name: str, result: Result) -> bool:
    print(f"\n{name}: the appointment list's changed poll, doctor1 of the demo ({result.rows} rows), {POLLS} polls")
    rows = [
        (c.name, f"{percentile(c.cpu_ms, 50):.2f}", f"{percentile(c.cpu_ms, 99):.2f}",
         f"{sum(c.cpu_ms) / len(c.cpu_ms):.2f}", f"{percentile(c.wall_ms, 50):.2f}", f"{percentile(c.wall_ms, 99):.2f}",
         c.patches, f"{sum(c.handoffs) / max(1, len(c.handoffs)):.1f}")
        for c in result.cases
    ]  # fmt: skip
    headers = ["case", "CPU p50 ms", "CPU p99 ms", "CPU mean ms", "wall p50 ms", "wall p99 ms", "patches", "hand-offs"]
    print(table(headers, rows))
    worst = max(percentile(c.cpu_ms, 50) for c in result.cases[:3])
    ok = worst <= TARGET_CPU_MS
    verdict = "met" if ok else "MISSED"
    print(f"CPU p50 per changed poll, worst case {worst:.2f} ms (target ≤ {TARGET_CPU_MS}): {verdict}")
    if result.profile:
        print(result.profile)
    return ok


def main() -> int:
    """Run the benchmark and print the tables; exit status 1 when a target is missed."""
    _count_handoffs()
    results = on_each_database("list_changed", ("demo",), _suite)
    with tempfile.TemporaryDirectory(prefix="bench-list-changed-inline-") as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/inline.db"
        results.insert(1, ("SQLite, reads inline", asyncio.run(_suite("SQLite inline", [url], Path(tmp), True))))
    threaded, inline = results[0][1], results[1][1]
    for before, after in zip(threaded.cases, inline.cases, strict=True):
        ratio = percentile(after.cpu_ms, 50) / max(1e-9, percentile(before.cpu_ms, 50))
        print(f"  {before.name}: CPU p50 inline / thread = {ratio:.2f}")
    return reported(results, _report)


if __name__ == "__main__":
    sys.exit(main())
