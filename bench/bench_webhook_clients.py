"""The webhook dispatcher's HTTP client: CPU time per request of httpx (as the dispatcher used it: lanes, each its own
client sending one request at a time) and of aiohttp (one session, requests in flight side by side), posting signed
webhooks to the loopback receiver of ``bench_webhooks`` (its own process, never failing). Only the sending
process's CPU counts (``time.process_time``); the rounds alternate, so both see the same machine.

Environment: ``BENCH_CLIENT_REQUESTS`` (per case, default 5000). No target: it shows why the dispatcher uses aiohttp
(docs/benchmarks.md, webhook delivery).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.bench_webhooks import Receiver, environment
from bench.common import table

REQUESTS = int(os.environ.get("BENCH_CLIENT_REQUESTS", "5000"))
IN_FLIGHT = (16, 64)
ROUNDS = 2
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def signed(n: int) -> tuple[bytes, dict[str, str]]:
    from standardwebhooks.webhooks import Webhook

    body = f'{{"type":"appointment.approved","timestamp":"2026-11-24T00:00:00Z","data":{{"version":{n}}}}}'
    message_id, at = f"msg_{n:032d}", datetime.now(UTC)
    headers = {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(message_id, at, body),
        "content-type": "application/json",
    }
    return body.encode(), headers


async def with_httpx(url: str, in_flight: int) -> None:
    import httpx

    clients = [
        httpx.AsyncClient(limits=httpx.Limits(max_connections=4, max_keepalive_connections=4)) for _ in range(in_flight)
    ]

    async def lane(client: httpx.AsyncClient, numbers: range) -> None:
        for n in numbers:
            body, headers = signed(n)
            (await client.post(url, content=body, headers=headers)).raise_for_status()

    try:
        await asyncio.gather(*(lane(c, range(i, REQUESTS, in_flight)) for i, c in enumerate(clients)))
    finally:
        for c in clients:
            await c.aclose()


async def with_aiohttp(url: str, in_flight: int) -> None:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=in_flight, limit_per_host=0)
    async with aiohttp.ClientSession(connector=connector, skip_auto_headers=("content-type",)) as session:

        async def lane(numbers: range) -> None:
            for n in numbers:
                body, headers = signed(n)
                async with session.post(url, data=body, headers=headers) as response:
                    response.raise_for_status()
                    await response.read()

        await asyncio.gather(*(lane(range(i, REQUESTS, in_flight)) for i in range(in_flight)))


def measure(send: Callable[[str, int], Awaitable[None]], url: str, in_flight: int) -> tuple[float, float]:
    """CPU µs per request and requests per second."""
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(send(url, in_flight))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu / REQUESTS * 1e6, REQUESTS / wall


def main() -> int:
    print(f"Webhook HTTP clients: {REQUESTS} signed POSTs per case to a loopback receiver, {ROUNDS} rounds")
    with tempfile.TemporaryDirectory(prefix="bench-clients-") as tmp:
        receiver = Receiver(Path(tmp) / "received.log", SECRET, 0.0, environment("sqlite://"))
        receiver.start()
        try:
            results: dict[tuple[str, int], list[tuple[float, float]]] = {}
            for _ in range(ROUNDS):
                for name, send in (("httpx (lanes)", with_httpx), ("aiohttp (one session)", with_aiohttp)):
                    for in_flight in IN_FLIGHT:
                        results.setdefault((name, in_flight), []).append(measure(send, receiver.url, in_flight))
        finally:
            receiver.stop()
    rows = []
    for (name, in_flight), runs in results.items():
        cpu = sorted(c for c, _ in runs)
        rate = sorted(r for _, r in runs)
        rows.append((name, in_flight, f"{cpu[0]:.0f}–{cpu[-1]:.0f}", f"{rate[0]:,.0f}–{rate[-1]:,.0f}"))
    print(table(["client", "in flight", "CPU µs per request", "requests/s"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
