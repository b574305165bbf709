"""A real doctordesk server on a free loopback port, for end-to-end tests (uvicorn in a subprocess).

``LiveServer.start(env)`` migrates and seeds the database the environment names, then serves it; ``stop()`` ends
it and ``restart()`` starts it again on the same port (the stream-reconnect tests use it).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

FAST_HASHING = {"DOCTORDESK_ARGON2_TIME_COST": "1", "DOCTORDESK_ARGON2_MEMORY_KIB": "1024"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cli(*args: str, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "doctordesk.cli", *args], env=env, check=True, capture_output=True, timeout=120
    )


@dataclass
class LiveServer:
    data_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # Start through `doctordesk serve` (the production command and its uvicorn options) instead of uvicorn itself.
    via_cli: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {**os.environ, **FAST_HASHING, "DOCTORDESK_DATA_DIR": str(self.data_dir), **self.extra_env}
        env.pop("DOCTORDESK_REQUIRE_SERVICES", None)
        return env

    def prepare(self) -> None:
        """Migrate and seed the demo clinic."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        _cli("migrate", env=self.env)
        _cli("seed-demo", "--if-empty", env=self.env)

    def start(self) -> LiveServer:
        with open(self.data_dir / f"server-{self.port}.log", "ab") as log:
            if self.via_cli:
                command = ["doctordesk.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)]
            else:
                command = ["uvicorn", "doctordesk.app:create_app", "--factory", "--host", "127.0.0.1"]
                command += ["--port", str(self.port), "--log-level", "warning"]
            self.process = subprocess.Popen(
                [sys.executable, "-m", *command],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {(self.data_dir / f'server-{self.port}.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/openapi.json", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("server did not start in 30 s")

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
def serving(data_dir: Path, **extra_env: str) -> Iterator[LiveServer]:
    """A migrated, seeded server running for the block, stopped after it (the e2e fixtures' body)."""
    live = LiveServer(data_dir, extra_env=extra_env)
    live.prepare()
    live.start()
    try:
        yield live
    finally:
        live.stop()
