"""A real doctordesk server on a free loopback port, for end-to-end tests (uvicorn in a process of its own).

``LiveServer.prepare()`` migrates and seeds the database the environment names, ``start()`` serves it; ``stop()``
ends it and ``restart()`` starts it again on the same port (the stream-reconnect tests use it).

A server runs at a moment of the test's choosing (``at``: docs/development.md#the-moment-a-test-runs-at): its clock,
its demo clinic and the browser pages opened on it (``clock_of``) read that moment when the server is made and run
on from there. Without ``at`` it runs on the system clock, and its test must pass at any moment.

The server process comes from the launcher of ``tests/support/processes.py`` (the app imported once per test
process), running uvicorn (or ``doctordesk serve``) with its output in the server's log file.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.clock import Clock, ShiftedClock, SystemClock, clock_setting
from doctordesk.web.http_protocol import PROTOCOL
from tests.support import databases
from tests.support.processes import Launched, launch

# Generous: a busy machine (a parallel run beside other work) can take many seconds to import and start the app.
START_SECONDS = 120
GRACEFUL_SHUTDOWN_SECONDS = 2
FAST_HASHING = {"DOCTORDESK_ARGON2_TIME_COST": "1", "DOCTORDESK_ARGON2_MEMORY_KIB": "1024"}


# Each test process hands out ports from a block of its own, below the kernel's ephemeral range (32768 and up on
# Linux), so two workers never pick the same port, and no port the kernel hands an outgoing connection. A process
# starts at a random place in its block, so that two runs on one machine seldom try the same ports.
PORT_BLOCK = 1000
FIRST_PORT = 20000
PORT_BLOCKS = 12  # 20000-31999
_block_start = FIRST_PORT + (databases.WORKER_INDEX % PORT_BLOCKS) * PORT_BLOCK
_next_port = [random.randrange(PORT_BLOCK)]


def free_port() -> int:
    """A loopback port that is free now and that no other test process of the run hands out."""
    for _ in range(PORT_BLOCK):
        port = _block_start + _next_port[0] % PORT_BLOCK
        _next_port[0] += 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use (or lingering after a test)
            return port
    raise RuntimeError(f"no free port in {_block_start}-{_block_start + PORT_BLOCK - 1}")


# Each live server's clock by its address, for the browser pages opened on it (``clock_of``).
_clocks: dict[str, Clock] = {}


def clock_of(url: str) -> Clock:
    """The clock of the live server at ``url`` (the system clock for any other address)."""
    return _clocks.get(url.rstrip("/"), SystemClock())


def moment_env(at: datetime, *, since: datetime | None = None) -> dict[str, str]:
    """The variables that run a process of doctordesk (a server, a worker, a command) on the timeline that reads
    ``at`` at ``since`` (now by default): ``DOCTORDESK_TEST_CLOCK``."""
    return {"DOCTORDESK_ENVIRONMENT": "test", "DOCTORDESK_TEST_CLOCK": clock_setting(at, since=since)}


@dataclass
class LiveServer:
    data_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    process: Launched | None = None
    # Start through `doctordesk serve` (the production command and its uvicorn options) instead of uvicorn itself.
    via_cli: bool = False
    # The moment the server's clock reads now (it runs on from there); None: the system clock.
    at: datetime | None = None
    clock: Clock = field(init=False)

    def __post_init__(self) -> None:
        since = datetime.now(UTC)
        if self.at is None:
            self.clock = SystemClock()
        else:
            self.clock = ShiftedClock(self.at, since=since)
            self.extra_env = {**self.extra_env, **moment_env(self.at, since=since)}
        _clocks[self.url] = self.clock

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {**os.environ, **FAST_HASHING, "DOCTORDESK_DATA_DIR": str(self.data_dir), **self.extra_env}
        env.pop("DOCTORDESK_REQUIRE_SERVICES", None)
        return env

    def prepare(self) -> None:
        """Migrate and seed the demo clinic, as ``doctordesk migrate`` and ``doctordesk seed-demo --if-empty`` do,
        in this process: a new SQLite file is a copy of the worker's migrated template (the subprocesses took
        seconds of interpreter start and imports per server)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = self.env
        url = env.get("DOCTORDESK_DATABASE_URL") or f"sqlite+aiosqlite:///{self.data_dir / 'doctordesk.db'}"
        passwords = Passwords(
            time_cost=int(env.get("DOCTORDESK_ARGON2_TIME_COST", FAST_HASHING["DOCTORDESK_ARGON2_TIME_COST"])),
            memory_kib=int(env.get("DOCTORDESK_ARGON2_MEMORY_KIB", FAST_HASHING["DOCTORDESK_ARGON2_MEMORY_KIB"])),
        )
        databases.migrate_and_seed(url, passwords, self.clock.now())

    def start(self) -> LiveServer:
        if self.via_cli:
            command = ["doctordesk", "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        else:
            command = ["uvicorn", "doctordesk.app:create_app", "--factory", "--host", "127.0.0.1"]
            command += ["--port", str(self.port), "--log-level", "warning"]
            command += ["--http", PROTOCOL]  # `serve`'s HTTP protocol (web/http_protocol.py)
            # A stop (or restart) with an SDK stream open otherwise waited for ``stop``'s 10 s and a kill.
            command += ["--timeout-graceful-shutdown", str(GRACEFUL_SHUTDOWN_SECONDS)]
        self.process = launch(command, self.env, self.data_dir / f"server-{self.port}.log")
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {(self.data_dir / f'server-{self.port}.log').read_text()[-2000:]}")
            try:
                # Liveness, which answers once the app has started (the API description cost the new process
                # 0.5-0.8 s of CPU to build, at every start).
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start in {START_SECONDS} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def serving(data_dir: Path, *, at: datetime | None = None, **extra_env: str) -> Iterator[LiveServer]:
    """A migrated, seeded server running for the block (at the moment ``at`` when given), stopped after it (the
    e2e fixtures' body)."""
    live = LiveServer(data_dir, extra_env=extra_env, at=at)
    live.prepare()
    live.start()
    try:
        yield live
    finally:
        live.stop()
