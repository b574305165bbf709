"""A worker that stops reading the event bus: ``doctordesk serve --workers 2`` without Redis (the bus's broker runs
in the supervising process), one worker stopped (``SIGSTOP``) for ``BENCH_STOPPED_SECONDS`` (60) while chat
messages are sent through the other at ``BENCH_STOPPED_RATE`` (200 per second), then let run again (``SIGCONT``).

Reported: the supervisor's RSS before, at its highest while the worker was stopped, and after; the sends made and
their rate; and the open streams (opened on both workers before the stop) that got a ``Timeout`` once the stopped
worker ran again: the broker drops a worker that lets more than ``broker.SEND_LIMIT`` bytes wait unsent, and the
worker, joining again, tells its streams to refresh. Target: the supervisor's RSS within 50 MiB of where it
started. ``python -m bench stopped_worker``; PostgreSQL when ``DOCTORDESK_BENCH_POSTGRES_URL`` is set.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx

from bench.bench_realtime import chat_appointment, login, rss_kib, run, table
from bench.bench_streams import Held
from bench.common import machine
from bench.workers_served import served
from doctordesk.web.routers.stream import STREAM_PATH

SECONDS = float(os.environ.get("BENCH_STOPPED_SECONDS", "60"))
RATE = float(os.environ.get("BENCH_STOPPED_RATE", "200"))
STREAMS = 16
SENDERS = 16
TARGET_MIB = 50.0


async def open_held(port: int, token: str, client: str) -> Held:
    loop = asyncio.get_running_loop()
    opened: asyncio.Future[None] = loop.create_future()
    request = (
        f"GET {STREAM_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"X-Client-Id: {client}\r\n\r\n"
    ).encode()
    _, held = await loop.create_connection(lambda: Held(request, opened), "127.0.0.1", port)
    async with asyncio.timeout(30):
        await opened
    return held


async def measure(base: str, port: int, supervisor: int, stopped: int) -> int:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        doctor = await login(http, "doctor1")
        support = await login(http, "support1")
        appointment = await chat_appointment(http, doctor, support)
    streams = [await open_held(port, doctor, f"stopped-{n}") for n in range(STREAMS)]
    one = httpx.Limits(max_connections=1)
    senders = [httpx.AsyncClient(base_url=base, timeout=5, limits=one) for _ in range(SENDERS)]
    headers = {"Authorization": f"Bearer {support}", "X-Client-Id": "bench-support"}
    for client in senders:  # each keeps one connection, to one worker or the other
        (await client.get("/healthz")).raise_for_status()
    await asyncio.sleep(1.0)
    before = rss_kib(supervisor)
    os.kill(stopped, signal.SIGSTOP)
    try:
        live: list[httpx.AsyncClient] = []
        for client in senders:  # those whose connection is with the running worker answer
            try:
                (await client.get("/healthz", timeout=1.0)).raise_for_status()
                live.append(client)
            except httpx.HTTPError:
                pass
        if not live:
            raise RuntimeError("no sender's connection reached the running worker")
        highest, sent, failed, late = before, 0, 0, 0
        free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for client in live:
            free.put_nowait(client)

        async def send(n: int) -> None:
            nonlocal sent, failed, late
            client = await free.get()
            if time.perf_counter() - started > SECONDS:  # not begun in time: the stop ends on time
                late += 1
                free.put_nowait(client)
                return
            try:
                r = await client.post(
                    "/profile/messages/send-message",
                    headers=headers,
                    data={"content": f"while stopped #{n}", "appointment-id": str(appointment)},
                )
                sent += r.status_code == 200
                failed += r.status_code != 200
            except httpx.HTTPError:
                failed += 1
            finally:
                free.put_nowait(client)

        started = time.perf_counter()
        pending: set[asyncio.Task[None]] = set()
        n = 0
        while (elapsed := time.perf_counter() - started) < SECONDS:
            while n < elapsed * RATE:
                task = asyncio.create_task(send(n))
                pending.add(task)
                task.add_done_callback(pending.discard)
                n += 1
            highest = max(highest, rss_kib(supervisor))
            await asyncio.sleep(0.005)
        await asyncio.gather(*pending)
        stopped_for = time.perf_counter() - started
    finally:
        os.kill(stopped, signal.SIGCONT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(h.timeouts or h.closed for h in streams):
        highest = max(highest, rss_kib(supervisor))
        await asyncio.sleep(0.2)
    await asyncio.sleep(2.0)
    after = rss_kib(supervisor)
    refreshed = sum(1 for h in streams if h.timeouts)
    for h in streams:
        if h.transport is not None:
            h.transport.close()
    for client in senders:
        await client.aclose()
    growth = (highest - before) / 1024
    table(
        f"One of 2 workers stopped {stopped_for:.0f} s under chat sends through the other; {machine()}",
        ["measure", "value"],
        [
            ["sends answered 200 / failed / not begun in time", f"{sent:,} / {failed:,} / {late:,} ({n:,} asked for)"],
            ["sends per second made", f"{sent / stopped_for:.0f}"],
            [
                "supervisor RSS before / highest / after, MiB",
                f"{before / 1024:.1f} / {highest / 1024:.1f} / {after / 1024:.1f}",
            ],
            [f"supervisor RSS growth (target ≤ {TARGET_MIB:g} MiB)", f"{growth:.1f} MiB"],
            ["open streams that got a Timeout after the worker ran again", f"{refreshed} of {len(streams)}"],
        ],
    )
    met = growth <= TARGET_MIB and sent > 0
    print(f"stopped worker: {'met' if met else 'MISSED'}")
    return 0 if met else 1


def main() -> int:
    print("A worker that stops reading the bus (serve --workers 2, the Unix-socket broker)")
    with served(2) as target:
        result: list[int] = []
        stopped = target.tree.workers[-1]

        async def body() -> None:
            result.append(await measure(target.base, target.port, target.tree.root, stopped))

        run(body())
    return result[0]


if __name__ == "__main__":
    raise SystemExit(main())
