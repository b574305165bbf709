"""Servers as deployed, for the deployment tests: ``doctordesk serve --workers N`` (the production command) and
HTTP clients each held to one process of it (a client keeps one connection, and a connection stays with the
worker that accepted it; ``/readyz`` names the process)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.live import START_SECONDS, LiveServer


@dataclass
class Served(LiveServer):
    """``doctordesk serve --workers N`` on a free loopback port."""

    workers: int = 2
    log_name: str = field(default="serve.log")

    def start(self) -> Served:
        command = ["doctordesk.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        with open(self.data_dir / self.log_name, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", *command, "--workers", str(self.workers)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited: {(self.data_dir / self.log_name).read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"serve did not start in {START_SECONDS} s")


async def instance_of(client: httpx.AsyncClient) -> str:
    ready = await client.get("/readyz")
    assert ready.status_code == 200, ready.text
    return str(ready.json()["instance"])


@contextlib.asynccontextmanager
async def clients_per_process(
    base_url: str, processes: int, each: int = 2, **options: object
) -> AsyncIterator[list[list[httpx.AsyncClient]]]:
    """For each of ``processes`` processes behind ``base_url``, ``each`` clients on connections of their own to it
    (a stream holds its client's connection, so requests beside it need another)."""
    held: dict[str, list[httpx.AsyncClient]] = {}
    spare: list[httpx.AsyncClient] = []
    try:
        deadline = time.monotonic() + START_SECONDS
        while len(held) < processes or any(len(c) < each for c in held.values()):
            assert time.monotonic() < deadline, f"{len(held)} of {processes} processes answered"
            client = httpx.AsyncClient(
                base_url=base_url,
                timeout=10,
                limits=httpx.Limits(max_connections=1),
                **options,  # type: ignore[arg-type]
            )
            try:
                instance = await instance_of(client)
            except httpx.HTTPError:
                await client.aclose()
                await _pause()
                continue
            mine = held.setdefault(instance, []) if len(held) < processes or instance in held else spare
            # One more than needed stays open meanwhile, so the next connection may go elsewhere.
            (mine if len(mine) < each else spare).append(client)
        yield list(held.values())
    finally:
        for client in [*(c for group in held.values() for c in group), *spare]:
            await client.aclose()


async def _pause() -> None:
    import asyncio

    await asyncio.sleep(0.1)


def metric(text: str, name: str) -> float:
    """A counter's value in a Prometheus exposition (0 when absent)."""
    found = re.search(rf"^{re.escape(name)}(?:_total)? ([0-9.e+]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def instances_at_once(url: str, count: int, *, workers: Iterable[int] = (), seconds: float = 30) -> list[str]:
    """Open ``count`` connections to ``url`` before sending anything on any, then ask on each which process
    accepted it (``/readyz``'s instance): connections opened together, as a proxy's pool or a load generator
    opens them. The ``workers`` are stopped (SIGSTOP) while the connections are opened, so all of them wait in
    the kernel before any worker accepts one, as when a load generator opens them faster than a worker wakes."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    stopped = list(workers)
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        opened = [socket.create_connection((host, int(port)), timeout=seconds) for _ in range(count)]
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    found: list[str] = []
    try:
        for sock in opened:
            sock.sendall(f"GET /readyz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        for sock in opened:
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            head, body = answer.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 200"), answer
            found.append(str(json.loads(body)["instance"]))
    finally:
        for sock in opened:
            sock.close()
    return found


def worker_pids(root: int) -> set[int]:
    """The worker processes ``root`` (``serve --workers N``) started: its children by multiprocessing's spawn."""
    found: set[int] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == root and b"spawn_main" in (proc / "cmdline").read_bytes():
                found.add(int(proc.name))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def listening(port: int) -> int:
    """How many sockets listen on ``port`` (one per worker with ``SO_REUSEPORT``, once the worker has started)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                count += fields[1].rsplit(":", 1)[1] == f"{port:04X}" and fields[3] == "0A"
    return count
