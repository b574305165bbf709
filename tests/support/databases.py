"""Test databases: SQLite files and the PostgreSQL server, migrated once and reset per test.

PostgreSQL: ``DOCTORDESK_TEST_POSTGRES_URL`` (default ``postgresql+asyncpg://root@127.0.0.1:5432/test``).
When the server is unreachable the PostgreSQL cases skip with the reason, unless
``DOCTORDESK_REQUIRE_SERVICES=1`` (CI), where they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import text

from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.schema import metadata

POSTGRES_URL = os.environ.get("DOCTORDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://root@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("DOCTORDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
T = TypeVar("T")
REQUIRED = os.environ.get("DOCTORDESK_REQUIRE_SERVICES") == "1"


def unavailable(what: str, reason: str) -> None:
    """Skip (or fail, when services are required) a test whose server is missing."""
    message = f"{what} is not reachable ({reason}); set DOCTORDESK_REQUIRE_SERVICES=1 to make this a failure"
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def redis_error() -> str | None:
    """Why the Redis server at ``REDIS_URL`` cannot be used, or None when it answers a PING."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
        return None
    except redis.RedisError as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    finally:
        client.close()


def redis_url() -> str:
    """The Redis server for tests that need one (skips, or fails when services are required, without it)."""
    error = redis_error()
    if error:
        unavailable("Redis", error)
    return REDIS_URL


def postgres_error() -> str | None:
    """Why the PostgreSQL server cannot be used, or None when it is ready (migrated)."""
    if "error" not in _pg_state:
        _pg_state["error"] = _run(_postgres_ready)
    return _pg_state["error"]


def required_services_missing() -> list[str]:
    """With DOCTORDESK_REQUIRE_SERVICES=1 (CI): the required servers that are not reachable, checked once at the
    start of the run so a missing server fails it at once and by name."""
    if not REQUIRED:
        return []
    missing = []
    for name, error in (("PostgreSQL", postgres_error()), ("Redis", redis_error())):
        if error:
            missing.append(f"{name}: {error}")
    return missing


async def _postgres_ready() -> str | None:
    engine = create_engine(POSTGRES_URL)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
        await upgrade(engine)
        return None
    except Exception as exc:  # any failure to reach or prepare the server
        return f"{type(exc).__name__}: {exc}"[:300]
    finally:
        await engine.dispose()


_pg_state: dict[str, str | None] = {}


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, also when called inside a running event loop (an async
    fixture that is the first to ask for a database): then on a thread of its own, with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def postgres_url() -> str:
    """The migrated PostgreSQL database, emptied for this test."""
    error = postgres_error()
    if error:
        unavailable("PostgreSQL", error)
    return POSTGRES_URL


async def truncate_postgres(url: str) -> None:
    engine = create_engine(url)
    try:
        names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
        async with engine.begin() as conn:
            await conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    finally:
        await engine.dispose()


_sqlite_template: dict[str, Path] = {}


def sqlite_url(directory: Path, template_dir: Path) -> str:
    """A fresh SQLite file, copied from a template migrated once per run."""
    if "path" not in _sqlite_template:
        path = template_dir / "template.db"
        engine = create_engine(f"sqlite+aiosqlite:///{path}")

        async def run() -> None:
            await upgrade(engine)
            await engine.dispose()

        _run(run)
        _sqlite_template["path"] = path
    target = directory / "doctordesk.db"
    shutil.copy(_sqlite_template["path"], target)
    return f"sqlite+aiosqlite:///{target}"
