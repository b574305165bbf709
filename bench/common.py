"""Shared helpers of the benchmarks: a real server on loopback, a load generator, percentiles and tables.

``Server`` migrates and seeds a fresh database (SQLite in a temporary directory, or, with ``postgres=True`` and
``DOCTORDESK_BENCH_POSTGRES_URL`` set, a PostgreSQL database of the benchmark's own, created and dropped) and serves
it with uvicorn in a subprocess on a free loopback port. ``load`` drives it with ``wrk`` (Debian's, installed by
``make bench``) or, without wrk, with an asyncio + httpx generator (which saturates long before the server on 2
cores: numbers from it are marked).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from doctordesk.web.http_protocol import PROTOCOL as SERVE_PROTOCOL

FAST_HASHING = {"DOCTORDESK_ARGON2_TIME_COST": "1", "DOCTORDESK_ARGON2_MEMORY_KIB": "1024"}
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def postgres_server() -> str | None:
    """The PostgreSQL server a benchmark may create its own databases on (``DOCTORDESK_BENCH_POSTGRES_URL``): the
    database that URL names is only connected through, never changed. None: SQLite only."""
    return os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL") or None


def database_label() -> str:
    return "PostgreSQL" if postgres_server() else "SQLite"


@contextmanager
def scratch_database(directory: Path, name: str, *, postgres: bool | None = None) -> Iterator[str]:
    """A fresh, empty database for one benchmark: a SQLite file in ``directory``, or, when
    ``DOCTORDESK_BENCH_POSTGRES_URL`` is set (and ``postgres`` is not False), a PostgreSQL database of its own,
    dropped afterwards."""
    server = postgres_server() if postgres is not False else None
    if server is None:
        yield f"sqlite+aiosqlite:///{directory / f'{name}.db'}"
        return
    with own_postgres_databases(server, [f"doctordesk_bench_{name}"]) as (url,):
        yield url


@dataclass
class Server:
    """``with Server() as s: s.url`` — a seeded doctordesk (or ``app``) under uvicorn on loopback. ``postgres``: on
    a PostgreSQL database of its own when ``DOCTORDESK_BENCH_POSTGRES_URL`` is set (SQLite otherwise)."""

    app: str = "doctordesk.app:create_app"
    env: dict[str, str] = field(default_factory=dict)
    postgres: bool = False
    port: int = field(default_factory=free_port)
    # uvicorn's HTTP protocol: `serve`'s own (web/http_protocol.py), so that a benchmark measures what production
    # runs; "httptools" for uvicorn's.
    http: str = SERVE_PROTOCOL
    # The module run as ``python -m``: uvicorn, or a wrapper taking its arguments (bench/traced_uvicorn.py).
    runner: str = "uvicorn"
    process: subprocess.Popen[bytes] | None = None
    database_url: str = ""  # the database it serves (set on start)
    _tmp: tempfile.TemporaryDirectory[str] | None = None
    _databases: ExitStack = field(default_factory=ExitStack)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> str:
        """The server's data directory (set on start)."""
        assert self._tmp is not None
        return self._tmp.name

    def _environment(self, data_dir: Path) -> dict[str, str]:
        env = {**os.environ, **FAST_HASHING, "DOCTORDESK_DATA_DIR": str(data_dir), **self.env}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        if "DOCTORDESK_DATABASE_URL" not in self.env:  # never a database the benchmark did not make
            env.pop("DOCTORDESK_DATABASE_URL", None)
        return env

    def __enter__(self) -> Server:
        self._tmp = tempfile.TemporaryDirectory(prefix="doctordesk-bench-")
        data = Path(self._tmp.name)
        env = self._environment(data)
        server = postgres_server()
        if self.postgres and server and "DOCTORDESK_DATABASE_URL" not in self.env:
            (url,) = self._databases.enter_context(own_postgres_databases(server, [f"doctordesk_bench_{self.port}"]))
            env["DOCTORDESK_DATABASE_URL"] = url
        self.database_url = env.get("DOCTORDESK_DATABASE_URL") or f"sqlite+aiosqlite:///{data / 'doctordesk.db'}"
        for args in (["migrate"], ["seed-demo", "--if-empty"]):
            subprocess.run([sys.executable, "-m", "doctordesk.cli", *args], env=env, check=True, capture_output=True)
        log = open(data / "server.log", "wb")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                self.runner,
                self.app,
                "--http",
                self.http,
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
                "--no-access-log",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((data / "server.log").read_text()[-3000:])
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start within 60 s")

    def __exit__(self, *_exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._databases.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def login(self, username: str, password: str = "demo") -> dict[str, str]:
        response = httpx.post(f"{self.url}/auth/login", data={"username": username, "password": password})
        response.raise_for_status()
        return {"Authorization": f"Bearer {response.json()['access_token']}"}


@contextmanager
def own_postgres_databases(server_url: str, names: Sequence[str]) -> Iterator[list[str]]:
    """Databases of the benchmark's own on the PostgreSQL server ``server_url`` connects to: created empty (dropped
    first when a run left them behind), yielded as URLs, dropped afterwards. The database ``server_url`` names is
    only connected through, never changed."""
    from sqlalchemy.engine import make_url

    base = make_url(server_url)

    async def run(statements: list[str]) -> None:
        import asyncpg

        conn = await asyncpg.connect(
            host=base.host or "127.0.0.1", port=base.port or 5432, user=base.username, database=base.database
        )
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    def drop() -> list[str]:
        return [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in names]

    asyncio.run(run([*drop(), *(f'CREATE DATABASE "{name}"' for name in names)]))
    try:
        yield [base.set(database=name).render_as_string(hide_password=False) for name in names]
    finally:
        asyncio.run(run(drop()))


# --- load -----------------------------------------------------------------------------------------------------


@dataclass
class Load:
    """What one load run measured."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    tool: str

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


class Percentiles:
    """The p50 and p99 of a result's ``latencies_ms``."""

    latencies_ms: list[float]

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


def load(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    connections: int = 1,
    seconds: float = 5.0,
    rotate: Sequence[dict[str, str]] = (),
    bodies: Sequence[str] = (),
    unique: str = "",
) -> Load:
    """Drive ``url`` with ``connections`` concurrent keep-alive clients for ``seconds``. ``rotate``: header sets
    taken in turn, one per request (added to ``headers``), so many distinct clients share the connections.
    ``bodies``: request bodies taken in turn, one per request, never twice (a run that would need more is an
    error of the caller). ``unique``: a header given a value of its own on every request (an ``Idempotency-Key``)."""
    sets = [{**(headers or {}), **extra} for extra in rotate] or [headers or {}]
    plan = _Plan(url, method, sets, connections, seconds, bodies, unique)
    return _wrk(plan) if have_wrk() else asyncio.run(_python_load(plan))


@dataclass(frozen=True)
class _Plan:
    """A load run: what ``load`` was asked, its header sets resolved."""

    url: str
    method: str
    header_sets: list[dict[str, str]]
    connections: int
    seconds: float
    bodies: Sequence[str]
    unique: str


def _lua_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wrk(plan: _Plan) -> Load:
    url, method, header_sets, connections = plan.url, plan.method, plan.header_sets, plan.connections
    seconds, bodies, unique = plan.seconds, plan.bodies, plan.unique
    lines = [f"wrk.method = {_lua_string(method)}"]
    entries = (
        "{" + ", ".join(f"[{_lua_string(k)}] = {_lua_string(v)}" for k, v in hs.items()) + "}" for hs in header_sets
    )
    sets = "local sets = {" + ",\n".join(entries) + "}"
    if bodies or unique:
        run = uuid.uuid4().hex[:12]
        lines += [
            sets,
            "local bodies = {" + ",\n".join(_lua_string(b) for b in bodies) + "}",
            "local turn = 0",
            "request = function()",
            "  turn = turn + 1",
            "  local headers = {}",
            "  for k, v in pairs(sets[(turn - 1) % #sets + 1]) do headers[k] = v end",
            f'  if {_lua_string(unique)} ~= "" then headers[{_lua_string(unique)}] = "{run}-" .. turn end',
            "  local body = nil",
            "  if #bodies > 0 then body = bodies[(turn - 1) % #bodies + 1] end",
            "  return wrk.format(nil, nil, headers, body)",
            "end",
        ]
    elif len(header_sets) == 1:
        lines += [f"wrk.headers[{_lua_string(k)}] = {_lua_string(v)}" for k, v in header_sets[0].items()]
    else:  # the headers in turn, without copying them (the light script for fast cases)
        lines += [
            sets,
            "local turn = 0",
            "request = function()",
            "  turn = turn % #sets + 1",
            "  return wrk.format(nil, nil, sets[turn])",
            "end",
        ]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    try:
        out = subprocess.run(
            [
                "wrk",
                "-t1",
                f"-c{connections}",
                f"-d{max(1, round(seconds))}s",
                "--latency",
                "--timeout",
                "10s",
                "-s",
                script.name,
                url,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(script.name)
    return _parse_wrk(out)


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"unexpected wrk latency {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _parse_wrk(out: str) -> Load:
    total = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    if not (total and p50 and p99):
        raise ValueError(f"unexpected wrk output:\n{out}")
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket_errors:
        errors += sum(int(g) for g in socket_errors.groups())
    return Load(
        requests=int(total.group(1)),
        seconds=_ms(total.group(2) + total.group(3)) / 1000,
        p50_ms=_ms(p50.group(1)),
        p99_ms=_ms(p99.group(1)),
        errors=errors,
        tool="wrk",
    )


async def _python_load(plan: _Plan) -> Load:
    url, method, header_sets, connections = plan.url, plan.method, plan.header_sets, plan.connections
    seconds, bodies, unique = plan.seconds, plan.bodies, plan.unique
    latencies: list[float] = []
    errors = 0
    turn = 0
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=10) as client:
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors, turn
            while time.perf_counter() < deadline:
                headers = header_sets[turn % len(header_sets)]
                if unique:
                    headers = {**headers, unique: uuid.uuid4().hex}
                body = bodies[turn % len(bodies)] if bodies else None
                turn += 1
                started = time.perf_counter()
                try:
                    response = await client.request(method, url, headers=headers, content=body)
                    if response.status_code >= 400:
                        errors += 1
                except httpx.HTTPError:
                    errors += 1
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - started
    return Load(
        requests=len(latencies),
        seconds=elapsed,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        errors=errors,
        tool="python (client-bound)",
    )


# --- output ---------------------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (readable in a terminal, pasteable into docs/benchmarks.md)."""

    def cell(value: Any) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} cores, load average {load_avg:.1f}, {time.strftime('%Y-%m-%d')}"


# --- rounds at a number of requests in flight ---------------------------------------------------------------

ROUND_COLUMNS = ["database", "what", "in flight", "n", "p50 ms", "p99 ms", "max ms", "per s", "errors"]


@dataclass
class Round:
    """One measured round of a write benchmark: a row of its table (``ROUND_COLUMNS``)."""

    database: str
    what: str
    in_flight: int
    latencies: list[float]
    seconds: float
    errors: int

    def row(self) -> list[Any]:
        n = len(self.latencies)
        return [
            self.database,
            self.what,
            self.in_flight,
            n,
            percentile(self.latencies, 50),
            percentile(self.latencies, 99),
            max(self.latencies) if self.latencies else 0.0,
            n / self.seconds if self.seconds else 0.0,
            self.errors,
        ]


async def in_flight_rounds(count: int, in_flight: int, send: Any) -> tuple[list[float], float, int]:
    """``count`` calls of ``send(i)`` (an awaitable HTTP response) with ``in_flight`` of them under way at any time:
    each call's latency in ms, the wall time in s, and how many answered 400 or more."""
    latencies: list[float] = []
    errors = 0
    next_index = 0

    async def worker() -> None:
        nonlocal errors, next_index
        while next_index < count:
            i = next_index
            next_index += 1
            started = time.perf_counter()
            response = await send(i)
            latencies.append((time.perf_counter() - started) * 1000)
            if response.status_code >= 400:
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return latencies, time.perf_counter() - started, errors
