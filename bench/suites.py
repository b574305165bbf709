"""Running a benchmark's suite on SQLite and on PostgreSQL, on databases brought up to date."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bench.common import machine, own_postgres_databases
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.clock import FixedClock
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade

T = TypeVar("T")
Suite = Callable[[str, list[str], Path], Coroutine[Any, Any, T]]


def on_each_database(
    name: str, databases: Sequence[object], suite: Suite[T], *, one_postgres: bool = False
) -> list[tuple[str, T]]:
    """``suite(label, urls, scratch folder)`` on SQLite (a file per entry of ``databases``) and, when
    ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server, on PostgreSQL (a database of the benchmark's own per entry, or
    one for all with ``one_postgres``, created and dropped): each run's label and result."""
    results: list[tuple[str, T]] = []
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        root = Path(tmp)
        files = [f"sqlite+aiosqlite:///{root}/{name}-{d}.db" for d in databases]
        results.append(("SQLite", asyncio.run(suite("SQLite", files, root))))
        server = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL")
        if server:
            names = (
                [f"doctordesk_bench_{name}"] if one_postgres else [f"doctordesk_bench_{name}_{d}" for d in databases]
            )
            with own_postgres_databases(server, names) as urls:
                results.append(("PostgreSQL", asyncio.run(suite("PostgreSQL", urls, root))))
    return results


async def migrated(url: str) -> None:
    """Bring a new database's schema up to date."""
    engine = create_engine(url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def reported(results: list[tuple[str, T]], report: Callable[[str, T], bool]) -> int:
    """Print the machine and each database's report; the exit status: 1 when any report missed its target."""
    print(f"\nmachine: {machine()}")
    met = [report(label, result) for label, result in results]
    return 0 if all(met) else 1


async def signed_in_client(
    stack: AsyncExitStack, url: str, tmp: Path, now: datetime, username: str = "doctor1"
) -> tuple[httpx.AsyncClient, dict[str, str]]:
    """The app on ``url`` in this process at the fixed time ``now`` (its lifespan held by ``stack``), a client of it,
    and the headers of ``username`` signed in."""
    settings = Settings(database_url=url, data_dir=tmp, argon2_time_cost=1, argon2_memory_kib=1024, push_adapter="none")
    app = create_app(settings, clock=FixedClock(now))
    await stack.enter_async_context(app.router.lifespan_context(app))
    transport = httpx.ASGITransport(app=app)
    client = await stack.enter_async_context(httpx.AsyncClient(transport=transport, base_url="http://bench"))
    login = await client.post("/auth/login", data={"username": username, "password": "demo"})
    return client, {"Authorization": f"Bearer {login.json()['access_token']}"}
