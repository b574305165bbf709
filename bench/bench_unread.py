"""Unread counts: the doctor's list and the support agents' thread list when one thread holds 50,000 unread messages,
against the same screens when it holds 50 (the baseline, measured in the same run, requests interleaved).

Runs the app in process (httpx ASGI transport) on two fresh databases, the demo clinic in each, one thread of
doctor1's filled with messages alternating between doctor1 and support1 (so half of them are unread for doctor1 and
all of them for support2, who never opened it). SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL``
is set (databases of its own). Target: p50 ratio (50,000 / 50) ≤ 1.3 for both screens.

    python -m bench unread            (or: make bench BENCH=unread)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.bench_chat import fill_thread
from bench.common import machine, percentile, postgres_server, scratch_database, table
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed

UNREAD = (50, int(os.environ.get("BENCH_UNREAD", "50000")))
RUNS = int(os.environ.get("BENCH_UNREAD_RUNS", "200"))
TARGET = 1.3
SCREENS = {"doctor's list (doctor1)": ("doctor1", "/profile/appointments"),
           "thread list (support2)": ("support2", "/profile/messages/threads")}  # fmt: skip


async def _clinic(stack: contextlib.AsyncExitStack, url: str, tmp: Path, unread: int) -> dict[str, Any]:
    """A running app on ``url`` with one thread of ``2 × unread`` messages: a PUT per screen, ready to call."""
    engine = create_engine(url)
    await upgrade(engine)
    await engine.dispose()
    settings = Settings(database_url=url, data_dir=tmp, argon2_time_cost=1, argon2_memory_kib=1024)
    app = create_app(settings)
    await stack.enter_async_context(app.router.lifespan_context(app))
    runtime = app.state.runtime
    async with runtime.db.transaction() as session:
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), runtime.clock.now())
    await fill_thread(runtime, demo.appointments[1], demo.users["doctor1"], demo.users["support1"], 2 * unread)
    client = await stack.enter_async_context(
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")
    )
    calls = {}
    for name, (user, path) in SCREENS.items():
        token = (await client.post("/auth/login", data={"username": user, "password": "demo"})).json()
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        page = await client.put(path, headers=headers)
        badge = f"unread-{demo.appointments[1]}"
        if badge not in page.text:
            raise RuntimeError(f"{name}: the filled thread is not on the first page")

        async def call(path: str = path, headers: dict[str, str] = headers) -> httpx.Response:
            return await client.put(path, headers=headers)

        calls[name] = call
    return calls


async def _measure(database: str, urls: dict[int, str], tmp: Path) -> list[list[Any]]:
    async with contextlib.AsyncExitStack() as stack:
        clinics = {n: await _clinic(stack, urls[n], tmp / str(n), n) for n in UNREAD}
        samples: dict[tuple[str, int], list[float]] = {(s, n): [] for s in SCREENS for n in UNREAD}
        for run in range(RUNS + 20):
            for screen in SCREENS:
                for n in UNREAD:
                    started = time.perf_counter()
                    answer = await clinics[n][screen]()
                    if answer.status_code != 200:
                        raise RuntimeError(answer.text[:300])
                    if run >= 20:  # the first ones warm caches
                        samples[(screen, n)].append((time.perf_counter() - started) * 1000)
    rows = []
    for screen in SCREENS:
        small, big = samples[(screen, UNREAD[0])], samples[(screen, UNREAD[1])]
        ratio = percentile(big, 50) / percentile(small, 50)
        rows.append([
            database, screen, percentile(small, 50), percentile(small, 99), percentile(big, 50),
            percentile(big, 99), f"{ratio:.2f}", "met" if ratio <= TARGET else "MISSED",
        ])  # fmt: skip
    return rows


def main() -> int:
    rows: list[list[Any]] = []
    for database in ["SQLite", *(["PostgreSQL"] if postgres_server() else [])]:
        with tempfile.TemporaryDirectory(prefix="bench-unread-") as tmp, contextlib.ExitStack() as stack:
            root = Path(tmp)
            urls = {}
            for n in UNREAD:
                (root / str(n)).mkdir()
                scratch = scratch_database(root / str(n), f"unread_{n}", postgres=database == "PostgreSQL")
                urls[n] = stack.enter_context(scratch)
            rows += asyncio.run(_measure(database, urls, root))
    print(f"\nUnread counts: one thread of {UNREAD[1]:,} unread vs {UNREAD[0]} ({machine()})")
    small, big = (f"{n:,}" for n in UNREAD)
    headers = ["database", "screen (PUT)", f"p50 ms ({small})", f"p99 ms ({small})", f"p50 ms ({big})",
               f"p99 ms ({big})", "p50 ratio", f"≤ {TARGET}"]  # fmt: skip
    print(table(headers, rows))
    return 0 if all(r[-1] == "met" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
