"""Chat benchmarks: send-message throughput and latency (text, and a 100 KB PDF), and load-more latency in a thread of
100 messages and of 1,000,000 messages (keyset paging: the two should cost the same; target ratio <= 1.5).

Runs the whole app in process (httpx ASGI transport: routing, auth, parsing, database, rendering; no network).
Baseline in the same run: an unchanged poll of the appointment list (auth + state check, no database).

    python -m bench.bench_chat            # SQLite in a temporary directory
    DOCTORDESK_BENCH_POSTGRES_URL=postgresql+asyncpg://... python -m bench.bench_chat   # PostgreSQL, in a
                                          # database of its own on that server (created, then dropped)
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from bench.common import database_label, scratch_database
from bench.suites import migrated
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.store.chat_tables import ChatThread
from doctordesk.store.seed import demo as seed
from doctordesk.store.seed import sample_files

SENDS_TEXT = 300
SENDS_PDF = 60
LOAD_MORE_RUNS = 200
BIG_THREAD = int(os.environ.get("DOCTORDESK_BENCH_BIG_THREAD", "1000000"))


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _row(name: str, samples: list[float], wall: float) -> dict[str, Any]:
    return {
        "case": name,
        "n": len(samples),
        "per_s": len(samples) / wall if wall else 0.0,
        "p50_ms": _pct(samples, 0.5) * 1000,
        "p99_ms": _pct(samples, 0.99) * 1000,
        "mean_ms": statistics.fmean(samples) * 1000,
    }


async def _timed(n: int, call: Callable[[int], Awaitable[httpx.Response]]) -> tuple[list[float], float]:
    samples = []
    started = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        response = await call(i)
        samples.append(time.perf_counter() - t0)
        if response.status_code != 200:
            raise RuntimeError(f"{response.status_code}: {response.text[:300]}")
    return samples, time.perf_counter() - started


async def fill_thread(runtime: Any, appointment_id: int, doctor_id: int, support_id: int, count: int) -> None:
    """``count`` messages in one statement, a second apart, ending before the benchmark's clock."""
    now = runtime.clock.now()
    base = now - timedelta(seconds=count + 10)
    async with runtime.db.transaction() as session:
        thread = ChatThread(appointment_id=appointment_id, created_at=base, last_activity_at=now)
        session.add(thread)
        await session.flush()
        params = {"t": thread.id, "d": doctor_id, "s": support_id, "n": count}
        if runtime.db.is_sqlite:
            await session.execute(
                text(
                    "INSERT INTO chat_messages (thread_id, sender_id, content, created_at) "
                    "WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :n) "
                    "SELECT :t, CASE n % 2 WHEN 0 THEN :d ELSE :s END, 'message ' || n, "
                    "strftime('%Y-%m-%d %H:%M:%S.000000', :base, '+' || n || ' seconds') FROM seq"
                ),
                {**params, "base": base.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S")},
            )
        else:
            await session.execute(
                text(
                    "INSERT INTO chat_messages (thread_id, sender_id, content, created_at) "
                    "SELECT CAST(:t AS bigint), CASE n % 2 WHEN 0 THEN CAST(:d AS bigint) ELSE CAST(:s AS bigint) END, "
                    "'message ' || n, "
                    "CAST(:base AS timestamptz) + n * interval '1 second' FROM generate_series(1, :n) AS n"
                ),
                {**params, "base": base},
            )
        newest = await session.scalar(text("SELECT max(id) FROM chat_messages WHERE thread_id = :t"), {"t": thread.id})
        thread.last_message_id = newest
    if not runtime.db.is_sqlite:
        async with runtime.db.engine.begin() as conn:
            await conn.execute(text("ANALYZE chat_messages"))


async def run(url: str, tmp: str) -> list[dict[str, Any]]:
    await migrated(url)
    settings = Settings(
        database_url=url,
        data_dir=Path(tmp),
        argon2_time_cost=1,
        argon2_memory_kib=1024,
        chat_send_per_minute=0,
    )
    app = create_app(settings)
    runtime = app.state.runtime
    rows: list[dict[str, Any]] = []
    async with app.router.lifespan_context(app):
        async with runtime.db.transaction() as session:
            demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), runtime.clock.now())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:

            async def login(name: str) -> dict[str, str]:
                r = await client.post("/auth/login", data={"username": name, "password": "demo"})
                return {"Authorization": f"Bearer {r.json()['access_token']}"}

            doctor, support = await login("doctor1"), await login("support1")
            listing = (await client.put("/profile/appointments", headers=doctor)).json()
            poll_headers = {**doctor, "X-Screen-State": listing["state"]}
            samples, wall = await _timed(
                LOAD_MORE_RUNS, lambda _i: client.patch("/profile/appointments", headers=poll_headers)
            )
            rows.append(_row("baseline: unchanged list poll", samples, wall))

            a = demo.appointments[0]
            samples, wall = await _timed(
                SENDS_TEXT,
                lambda i: client.post(
                    "/profile/messages/send-message",
                    data={"content": f"Message {i}", "appointment-id": str(a)},
                    headers=doctor,
                ),
            )
            rows.append(_row("send-message, text", samples, wall))

            pdf = sample_files.pdf("Report", padding=100 * 1024)
            samples, wall = await _timed(
                SENDS_PDF,
                lambda i: client.post(
                    "/profile/messages/send-message",
                    data={"content": f"Report {i}", "appointment-id": str(a)},
                    files={"file": ("report.pdf", pdf, "application/pdf")},
                    headers=doctor,
                ),
            )
            rows.append(_row("send-message, 100 KB PDF", samples, wall))

            small, big = demo.appointments[1], demo.appointments[3]
            await fill_thread(runtime, small, demo.users["doctor1"], demo.users["support1"], 100)
            t0 = time.perf_counter()
            await fill_thread(runtime, big, demo.users["doctor1"], demo.users["support1"], BIG_THREAD)
            fill = time.perf_counter() - t0
            for appointment, label in ((small, "100"), (big, f"{BIG_THREAD:,}")):
                page = (
                    await client.put(f"/profile/messages/user-chat?appointment-id={appointment}", headers=support)
                ).json()
                link = _find(page["elements"], "load-more")
                headers = {**support, "X-Screen-State": page["state"]}
                endpoint = link["action"]["endpoint"]

                def load_more(_i: int, url: str = endpoint, h: dict[str, str] = headers) -> Any:
                    return client.patch(url, headers=h)

                samples, wall = await _timed(LOAD_MORE_RUNS, load_more)
                rows.append(_row(f"load-more, thread of {label}", samples, wall))
            rows.append({"case": f"(bulk insert of {BIG_THREAD:,} messages: {fill:.1f} s)"})
    return rows


def _find(elements: list[dict[str, Any]], element_id: str) -> dict[str, Any]:
    for e in elements:
        if e["id"] == element_id:
            return e
        found = _find(e.get("children", []), element_id) if e.get("children") else None
        if found:
            return found
    return {}


def main() -> None:
    backend = database_label()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(Path(tmp), "chat") as url:
        rows = asyncio.run(run(url, tmp))
    print(f"\nChat ({backend}, {platform.machine()}, {os.cpu_count()} cores, in-process ASGI)")
    print(f"{'case':<40} {'n':>5} {'per s':>9} {'p50 ms':>9} {'p99 ms':>9}")
    for r in rows:
        if "n" not in r:
            print(r["case"])
            continue
        print(f"{r['case']:<40} {r['n']:>5} {r['per_s']:>9.1f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f}")
    small = next(r for r in rows if r["case"] == "load-more, thread of 100")
    big = next(r for r in rows if r["case"].startswith("load-more, thread of") and r is not small)
    ratio = big["p50_ms"] / small["p50_ms"]
    print(f"load-more p50 ratio, big / 100: {ratio:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
