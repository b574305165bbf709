"""Test databases: SQLite files and PostgreSQL databases, migrated (and seeded) once and reset per test.

Each test process (a pytest-xdist worker ``gw0``, ``gw1`` …, or the one process of a run without workers) has
databases of its own, derived from the configured ones (docs/development.md):

- PostgreSQL: ``DOCTORDESK_TEST_POSTGRES_URL`` (default ``postgresql+asyncpg://root@127.0.0.1:5432/test``) names
  the server and a database that exists there. The run migrates a template database ``<name>_template`` once (the
  first worker to need it, under an advisory lock), and each worker creates ``<name>_<worker>`` from it
  (``<name>_main`` without workers). A test's database is reset in one round trip: every table emptied and the
  sequences restarted, or, for a test of the demo clinic, refilled from a copy of the seeded tables kept in a
  schema ``doctordesk_seed_<n>`` of the worker's database (one per moment the clinic was seeded at).
- SQLite: a file migrated once per worker, and a copy of it with the demo clinic; each test gets a copy.
- Redis: ``DOCTORDESK_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/15``) with the database number moved by
  the worker's index (wrapping within 0-15): ``/15`` is gw0's, ``/0`` gw1's.

When a server is unreachable its tests skip with the reason, unless ``DOCTORDESK_REQUIRE_SERVICES=1`` (CI), where
they fail.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import copy
import os
import shutil
import tempfile
import threading
import uuid
import zlib
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import pytest
from sqlalchemy.engine import make_url

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.store.db import Database, create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.schema import metadata
from doctordesk.store.seed import demo as seed
from tests.support import postgres_emptying as emptying

T = TypeVar("T")
REQUIRED = os.environ.get("DOCTORDESK_REQUIRE_SERVICES") == "1"

# The pytest-xdist worker this process is ("gw0", "gw1" …), "main" in a run without workers.
WORKER = os.environ.get("PYTEST_XDIST_WORKER") or "main"
WORKER_INDEX = int(WORKER[2:]) if WORKER.startswith("gw") and WORKER[2:].isdigit() else 0
# The run this process belongs to (shared by a run's workers): the template is migrated once per run.
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex

CONFIGURED_POSTGRES_URL = os.environ.get(
    "DOCTORDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://root@127.0.0.1:5432/test"
)
CONFIGURED_REDIS_URL = os.environ.get("DOCTORDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REDIS_DATABASES = 16

# The demo clinic's passwords are hashed with the tests' cheap settings (the ``demo`` fixture's).
PASSWORDS = Passwords(time_cost=1, memory_kib=1024)
# The schemas of a worker's PostgreSQL database that hold the seeded tables' rows: one per moment the demo clinic
# was seeded at (``doctordesk_seed_0``, ``doctordesk_seed_1`` …).
SEED_SCHEMA = "doctordesk_seed"


def _with_database(url: str, name: str) -> str:
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _database_name(url: str) -> str:
    name = make_url(url).database
    if not name:
        raise ValueError(f"DOCTORDESK_TEST_POSTGRES_URL names no database: {url}")
    return name


def worker_redis_url(configured: str, index: int) -> str:
    """``configured`` with its database number moved by ``index`` (within Redis's 16 databases)."""
    parts = urlsplit(configured)
    number = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(number + index) % REDIS_DATABASES}"))


POSTGRES_TEMPLATE = f"{_database_name(CONFIGURED_POSTGRES_URL)}_template"
POSTGRES_DATABASE = f"{_database_name(CONFIGURED_POSTGRES_URL)}_{WORKER}"
# This worker's database (the URL the PostgreSQL cases and live servers use).
POSTGRES_URL = _with_database(CONFIGURED_POSTGRES_URL, POSTGRES_DATABASE)
# This worker's Redis database.
REDIS_URL = worker_redis_url(CONFIGURED_REDIS_URL, WORKER_INDEX)


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
    """Why the PostgreSQL server cannot be used, or None when this worker's database is ready (migrated)."""
    if "error" not in _pg_state:
        _pg_state["error"] = _run(_postgres_ready)
    return _pg_state["error"]


def required_services_missing(*, prepare: bool = True) -> list[str]:
    """With DOCTORDESK_REQUIRE_SERVICES=1 (CI): the required servers that are not reachable, checked once at the
    start of the run so a missing server fails it at once and by name. ``prepare``: also create this process's
    PostgreSQL database (without it only the configured database is reached)."""
    if not REQUIRED:
        return []
    missing = []
    postgres = postgres_error() if prepare else _run(_postgres_reachable)
    for name, error in (("PostgreSQL", postgres), ("Redis", redis_error())):
        if error:
            missing.append(f"{name}: {error}")
    return missing


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _connect(url: str) -> Any:
    import asyncpg

    return await asyncpg.connect(_asyncpg_dsn(url))


async def _postgres_reachable() -> str | None:
    try:
        conn = await _connect(CONFIGURED_POSTGRES_URL)
        await conn.close()
        return None
    except Exception as exc:  # any failure to reach the server
        return f"{type(exc).__name__}: {exc}"[:300]


async def _postgres_ready() -> str | None:
    try:
        await _create_worker_database()
        return None
    except Exception as exc:  # any failure to reach or prepare the server
        return f"{type(exc).__name__}: {exc}"[:300]


async def _create_worker_database() -> None:
    """This worker's database, created from the run's template (which the first worker to get here migrates:
    the others wait for it on an advisory lock)."""
    admin = await _connect(CONFIGURED_POSTGRES_URL)
    lock = zlib.crc32(POSTGRES_TEMPLATE.encode())
    try:
        await admin.execute("SELECT pg_advisory_lock($1)", lock)
        try:
            made_for = await admin.fetchval(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", POSTGRES_TEMPLATE
            )
            if made_for != RUN_ID:
                await admin.execute(f'DROP DATABASE IF EXISTS "{POSTGRES_TEMPLATE}" WITH (FORCE)')
                await admin.execute(f'CREATE DATABASE "{POSTGRES_TEMPLATE}"')
                engine = create_engine(_with_database(CONFIGURED_POSTGRES_URL, POSTGRES_TEMPLATE))
                try:
                    await upgrade(engine)
                finally:
                    await engine.dispose()
                await admin.execute(f"COMMENT ON DATABASE \"{POSTGRES_TEMPLATE}\" IS '{RUN_ID}'")
            await admin.execute(f'DROP DATABASE IF EXISTS "{POSTGRES_DATABASE}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{POSTGRES_DATABASE}" TEMPLATE "{POSTGRES_TEMPLATE}"')
            # A test's commits need not survive a crash of the database server: they return without waiting for
            # the WAL to reach the disk (3.5 ms a commit on this machine's disk, 0.2 ms without). Every other
            # guarantee, atomicity and isolation included, is the same; the app's own settings are untouched.
            await admin.execute(f'ALTER DATABASE "{POSTGRES_DATABASE}" SET synchronous_commit = off')
        finally:
            await admin.execute("SELECT pg_advisory_unlock($1)", lock)
    finally:
        await admin.close()


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
    """This worker's migrated PostgreSQL database (as the previous test left it: see ``reset_postgres``)."""
    error = postgres_error()
    if error:
        unavailable("PostgreSQL", error)
    return POSTGRES_URL


# --- the demo clinic, seeded once --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A test database that holds the demo clinic seeded at ``demo.now`` (what the ``demo`` fixture returns)."""

    url: str
    demo: seed.Demo

    def fresh_demo(self) -> seed.Demo:
        """The seed's ids, a copy the test may change."""
        return copy.deepcopy(self.demo)


async def seed_into(url: str, now: datetime) -> seed.Demo:
    """Seed the demo clinic into the (empty) database at ``url``: the code path of ``doctordesk seed-demo``."""
    db = Database(url)
    try:
        async with db.transaction() as session:
            return await seed.seed_demo(session, PASSWORDS, now)
    finally:
        await db.dispose()


def migrate_and_seed(url: str, passwords: Passwords, now: datetime) -> None:
    """``doctordesk migrate`` then ``doctordesk seed-demo --if-empty`` on ``url`` (a live server's database), at
    ``now`` (the server's clock): a SQLite file that does not exist yet starts as a copy of this process's migrated
    template."""

    async def run() -> None:
        path = _sqlite_path(url)
        if path is not None and not path.exists():
            shutil.copy(_sqlite_templates_in(_process_template_dir()).empty, path)
        else:
            engine = create_engine(url)
            try:
                await upgrade(engine)
            finally:
                await engine.dispose()
        db = Database(url)
        try:
            async with db.transaction() as session:
                if await seed.is_empty(session):
                    await seed.seed_demo(session, passwords, now)
        finally:
            await db.dispose()

    _run(run)


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database)


_process_dir: list[Path] = []


def _process_template_dir() -> Path:
    """A directory of this process's own for templates that outlive one test (removed when the process ends)."""
    if not _process_dir:
        _process_dir.append(Path(tempfile.mkdtemp(prefix=f"doctordesk-{WORKER}-")))
        atexit.register(shutil.rmtree, _process_dir[0], True)
    return _process_dir[0]


# --- PostgreSQL: emptied or refilled per test --------------------------------------------------------------------


@dataclass
class _Snapshot:
    now: datetime
    demo: seed.Demo
    refill: str  # the statements that refill the emptied tables and set the sequences as the seed left them


# Per database, the demo clinic by the moment it was seeded at: a module whose tests run at several moments (the
# any-day module: fourteen, each test at each in turn) seeds each moment once, not at every change of moment.
_pg_snapshots: dict[str, dict[datetime, _Snapshot]] = {}


@dataclass
class _Resetter:
    """A connection to one worker database kept for the resets (a new one per test cost a server process start
    and its catalog reads: three quarters of the reset), with the statements that empty it."""

    conn: Any
    empty: list[str]
    finish: list[str]

    @classmethod
    async def open(cls, url: str) -> _Resetter:
        conn = await _connect(url)
        guarded = await emptying.guarded_tables(conn)
        sequences = [name for name, _ in await emptying.sequences(conn)]
        replica = bool(await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
        return cls(
            conn,
            emptying.empty_statements(guarded, sequences, replica=replica),
            emptying.finish(guarded, replica=replica),
        )


_resetters: dict[str, _Resetter] = {}
_reset_loop: list[asyncio.AbstractEventLoop] = []


def _on_reset_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> concurrent.futures.Future[T]:
    """Run a coroutine on the loop of this process's reset thread, where the kept connections live."""
    if not _reset_loop:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="postgres-reset", daemon=True).start()
        _reset_loop.append(loop)
        atexit.register(_close_resetters)
    return asyncio.run_coroutine_threadsafe(make(), _reset_loop[0])


def _close_resetters() -> None:
    async def close() -> None:
        for resetter in _resetters.values():
            await resetter.conn.close(timeout=5)

    asyncio.run_coroutine_threadsafe(close(), _reset_loop[0]).result(timeout=10)


async def _reset(url: str, now: datetime | None) -> seed.Demo | None:
    resetter = _resetters.get(url)
    if resetter is None or resetter.conn.is_closed():
        resetter = _resetters[url] = await _Resetter.open(url)
    try:
        return await _reset_with(resetter, url, now)
    except Exception:
        # A test ended the connection or changed the schema (a migration down and up): once more, afresh.
        resetter.conn.terminate()
        resetter = _resetters[url] = await _Resetter.open(url)
        return await _reset_with(resetter, url, now)


async def _reset_with(resetter: _Resetter, url: str, now: datetime | None) -> seed.Demo | None:
    conn = resetter.conn
    snapshot = _pg_snapshots.get(url, {}).get(now) if now is not None else None
    if now is not None and snapshot is None:
        await conn.execute(";\n".join(resetter.empty + resetter.finish))
        snapshot = await _take_snapshot(conn, url, now)
        return snapshot.demo
    refill = [snapshot.refill] if snapshot is not None else []
    # One transaction, one round trip.
    await conn.execute(";\n".join(resetter.empty + refill + resetter.finish))
    return snapshot.demo if snapshot is not None else None


async def _take_snapshot(conn: Any, url: str, now: datetime) -> _Snapshot:
    """Seed the emptied database and keep a copy of the seeded tables' rows in a schema of this moment's own."""
    demo = await seed_into(url, now)
    snapshots = _pg_snapshots.setdefault(url, {})
    schema = f"{SEED_SCHEMA}_{len(snapshots)}"
    statements = [f"DROP SCHEMA IF EXISTS {schema} CASCADE", f"CREATE SCHEMA {schema}"]
    refill = []
    for table in metadata.sorted_tables:
        name = emptying.quoted(table.name)
        if await conn.fetchval(f"SELECT EXISTS (SELECT FROM public.{name})"):
            statements.append(f"CREATE TABLE {schema}.{name} AS TABLE public.{name}")
            refill.append(f"INSERT INTO public.{name} SELECT * FROM {schema}.{name}")
    await conn.execute(";\n".join(statements))
    for sequence, last_value in await emptying.sequences(conn):
        if last_value is not None:
            refill.append(f"SELECT setval('public.{emptying.quoted(sequence)}', {int(last_value)})")
    snapshot = _Snapshot(now, demo, ";\n".join(refill))
    snapshots[now] = snapshot
    return snapshot


def reset_postgres(url: str, *, demo_at: datetime | None = None) -> Prepared | None:
    """Empty this worker's database for a test; with ``demo_at``, fill it with the demo clinic seeded at that time
    (seeded once, copied back for every later test)."""
    demo = _on_reset_thread(lambda: _reset(url, demo_at)).result()
    return Prepared(url, demo) if demo is not None else None


async def reset_postgres_async(url: str, *, demo_at: datetime | None = None) -> Prepared | None:
    """``reset_postgres`` from a coroutine."""
    demo = await asyncio.wrap_future(_on_reset_thread(lambda: _reset(url, demo_at)))
    return Prepared(url, demo) if demo is not None else None


async def truncate_postgres(url: str) -> None:
    """Empty every table of the database at ``url`` and restart its sequences."""
    await asyncio.wrap_future(_on_reset_thread(lambda: _reset(url, None)))


# --- SQLite: a copy of a prepared file per test ------------------------------------------------------------------


@dataclass
class _SqliteTemplates:
    empty: Path
    seeded: dict[datetime, tuple[Path, seed.Demo]]


_sqlite_templates: dict[Path, _SqliteTemplates] = {}


def _sqlite_templates_in(template_dir: Path) -> _SqliteTemplates:
    if template_dir not in _sqlite_templates:
        path = template_dir / "template.db"
        engine = create_engine(f"sqlite+aiosqlite:///{path}")

        async def run() -> None:
            await upgrade(engine)
            await engine.dispose()

        _run(run)
        _sqlite_templates[template_dir] = _SqliteTemplates(path, {})
    return _sqlite_templates[template_dir]


def sqlite_url(directory: Path, template_dir: Path) -> str:
    """A fresh, migrated SQLite file, copied from a template migrated once per worker."""
    return sqlite_database(directory, template_dir)[0]


def sqlite_database(
    directory: Path, template_dir: Path, *, demo_at: datetime | None = None
) -> tuple[str, Prepared | None]:
    """A fresh, migrated SQLite file in ``directory`` (with ``demo_at``: holding the demo clinic seeded at that
    time), copied from a template prepared once per worker in ``template_dir``."""
    templates = _sqlite_templates_in(template_dir)
    source = templates.empty
    demo = None
    if demo_at is not None:
        if demo_at not in templates.seeded:
            seeded = template_dir / f"template-demo-{len(templates.seeded)}.db"
            shutil.copy(templates.empty, seeded)
            templates.seeded[demo_at] = (seeded, _run(lambda: seed_into(f"sqlite+aiosqlite:///{seeded}", demo_at)))
        source, demo = templates.seeded[demo_at]
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "doctordesk.db"
    shutil.copy(source, target)
    url = f"sqlite+aiosqlite:///{target}"
    return url, (Prepared(url, demo) if demo is not None else None)
