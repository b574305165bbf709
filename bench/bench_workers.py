"""``doctordesk serve --workers 2`` against one worker, in the same run, on PostgreSQL without Redis (the workers
share the Unix-socket bus of ``serve``): unchanged polls per second and chat sends per second at 1, 10 and 50
connections (wrk), rounds interleaved (one worker, two workers, for each level).

Unchanged polls come from ``CLIENTS`` distinct signed-in clients (a token and client id each) whose list page
was opened through whichever worker took the connection: with two workers about half the polls reach the worker
that did not issue the token, which answers from memory only because the screen state is shared. Chat sends come
from 50 clients, each with its own appointment's chat open (``bench_chat_send``'s senders). The load generator
shares the machine's cores with the server: on 2 cores the second worker competes with wrk.

    python -m bench workers            (needs DOCTORDESK_BENCH_POSTGRES_URL; SQLite otherwise)
Targets (issue 29): two workers ≥ 1.6 × one worker's unchanged polls/s and ≥ 1.5 × its chat sends/s.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from bench.bench_chat_send import ENV as SEND_ENV
from bench.bench_chat_send import _senders
from bench.common import (
    FAST_HASHING,
    ROOT,
    Load,
    database_label,
    free_port,
    load,
    machine,
    own_postgres_databases,
    postgres_server,
    table,
)

LEVELS = (1, 10, 50)
SECONDS = float(os.environ.get("DOCTORDESK_BENCH_SECONDS", "4"))
CLIENTS = 100
USERS = ("doctor1", "doctor2", "doctor3", "support1", "support2")


@contextmanager
def served(workers: int) -> Iterator[str]:
    """``doctordesk serve --workers N`` on a fresh, seeded database of its own; its base URL."""
    with ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="doctordesk-bench-")))
        port = free_port()
        env = {**os.environ, **FAST_HASHING, **SEND_ENV, "DOCTORDESK_DATA_DIR": str(data)}
        env |= {"DOCTORDESK_ACCESS_LOG": "false", "PYTHONPATH": str(ROOT)}
        env.pop("DOCTORDESK_DATABASE_URL", None)
        env.pop("DOCTORDESK_REDIS_URL", None)
        server = postgres_server()
        if server:
            (url,) = stack.enter_context(own_postgres_databases(server, [f"doctordesk_bench_workers_{workers}"]))
            env["DOCTORDESK_DATABASE_URL"] = url
        for args in (["migrate"], ["seed-demo", "--if-empty"]):
            subprocess.run([sys.executable, "-m", "doctordesk.cli", *args], env=env, check=True, capture_output=True)
        command = ["serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
        log = stack.enter_context(open(data / "serve.log", "wb"))
        process = subprocess.Popen([sys.executable, "-m", "doctordesk.cli", *command], env=env, stdout=log, stderr=log)
        stack.callback(_stop, process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise RuntimeError((data / "serve.log").read_text()[-3000:])
        yield base


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


async def _pollers(base: str) -> list[dict[str, str]]:
    """``CLIENTS`` clients' poll headers, each page opened on a connection of its own (any worker)."""
    found: list[dict[str, str]] = []
    for n in range(CLIENTS):
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            login = await http.post("/auth/login", data={"username": USERS[n % len(USERS)], "password": "demo"})
            headers = {"Authorization": f"Bearer {login.json()['access_token']}", "X-Client-Id": f"poll-{n}"}
            page = await http.put("/profile/appointments", headers=headers)
            found.append({**headers, "X-Screen-State": page.json()["state"]})
    return found


async def _sends(base: str) -> tuple[list[dict[str, str]], list[str]]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        senders = await _senders(http)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    headers = [{**s.headers, **form, "X-Screen-State": s.state} for s in senders]
    bodies = [urlencode({"content": "Checking in", "appointment-id": s.appointment}) for s in senders]
    return headers, bodies


def _measure(bases: dict[int, str]) -> dict[tuple[int, str, int], Load]:
    """Every send round after every poll round: a send changes the lists the pollers' tokens name (wrk repeats
    a poll's headers, so a stale token would make every later poll render)."""
    sends = {w: asyncio.run(_sends(b)) for w, b in bases.items()}

    def send(w: int, connections: int, seconds: float) -> Load:
        headers, bodies = sends[w]
        url = f"{bases[w]}/profile/messages/send-message"
        return load(url, method="POST", rotate=headers, bodies=bodies, connections=connections, seconds=seconds)

    for w in bases:  # warm-up of the send path, before the pollers open their pages
        send(w, 4, 1)
    pollers = {w: asyncio.run(_pollers(b)) for w, b in bases.items()}

    def poll(w: int, connections: int, seconds: float) -> Load:
        url = f"{bases[w]}/profile/appointments"
        return load(url, method="PATCH", rotate=pollers[w], connections=connections, seconds=seconds)

    results: dict[tuple[int, str, int], Load] = {}
    for w in bases:
        poll(w, 4, 1)
    for level in LEVELS:
        for w in bases:
            results[(w, "unchanged poll", level)] = poll(w, level, SECONDS)
    for level in LEVELS:
        for w in bases:
            results[(w, "chat send", level)] = send(w, level, SECONDS)
    return results


def main() -> int:
    with served(1) as one, served(2) as two:
        results = _measure({1: one, 2: two})
    rows: list[list[Any]] = []
    ok = True
    for (workers, what, level), run in results.items():
        ratio = ""
        if workers == 2:
            single = results[(1, what, level)]
            gain = run.rps / single.rps if single.rps else 0.0
            ratio = f"{gain:.2f}"
            if level >= 10:
                ok = ok and gain >= (1.6 if what == "unchanged poll" else 1.5)
        rows.append([what, level, workers, round(run.rps), run.p50_ms, run.p99_ms, run.errors, ratio, run.tool])
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    print(f"\nserve --workers 2 vs one worker, {database_label()} without Redis ({machine()})")
    print(table(["what", "connections", "workers", "per s", "p50 ms", "p99 ms", "errors", "× one", "tool"], rows))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
