"""``doctordesk serve --workers N`` for the workers benchmark (bench_workers.py): a server of its own on a fresh,
seeded database (PostgreSQL when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server, else SQLite), and its process
tree."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.bench_chat_send import ENV as SEND_ENV
from bench.common import FAST_HASHING, ROOT, free_port, own_postgres_databases, postgres_server
from bench.procs import Tree


@dataclass
class Served:
    base: str
    port: int
    tree: Tree
    database: str  # the PostgreSQL database's name ("": SQLite, whose work is the workers' own)


@contextmanager
def served(workers: int) -> Iterator[Served]:
    """``doctordesk serve --workers N`` on a fresh, seeded database of its own."""
    with ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="doctordesk-bench-")))
        port = free_port()
        env = {**os.environ, **FAST_HASHING, **SEND_ENV, "DOCTORDESK_DATA_DIR": str(data)}
        env |= {"DOCTORDESK_ACCESS_LOG": "false", "PYTHONPATH": str(ROOT)}
        env.pop("DOCTORDESK_DATABASE_URL", None)
        env.pop("DOCTORDESK_REDIS_URL", None)
        server, database = postgres_server(), f"doctordesk_bench_workers_{workers}_{os.getpid()}"
        if server:
            (url,) = stack.enter_context(own_postgres_databases(server, [database]))
            env["DOCTORDESK_DATABASE_URL"] = url
        for args in (["migrate"], ["seed-demo", "--if-empty"]):
            subprocess.run([sys.executable, "-m", "doctordesk.cli", *args], env=env, check=True, capture_output=True)
        command = ["serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
        log = stack.enter_context(open(data / "serve.log", "wb"))
        process = subprocess.Popen([sys.executable, "-m", "doctordesk.cli", *command], env=env, stdout=log, stderr=log)
        stack.callback(_stop, process)
        base = f"http://127.0.0.1:{port}"
        _wait_ready(base, data / "serve.log")
        tree = Tree.of(process.pid)
        if len(tree.workers) != workers:
            raise RuntimeError(f"expected {workers} worker process(es), found {tree.workers}")
        yield Served(base, port, tree, database if server else "")


def _wait_ready(base: str, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(log.read_text()[-3000:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
