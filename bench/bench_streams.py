"""Stream setup and stream churn: how long one server takes to open thousands of event streams, against a bare SSE
endpoint in a separate minimal app under the same server settings, and whether its memory comes back after many
streams opened and closed.

``python -m bench streams`` (or ``make bench BENCH=streams``). SQLite by default; ``DOCTORDESK_BENCH_POSTGRES_URL``
serves the service from a PostgreSQL database of its own on that server (dropped afterwards).

- Open: every stream has its own access token (inserted before the run) and its own client id, whose screen (the
  doctor's appointment list) was recorded by a ``PUT`` before the clock starts. The service's token cache is off
  (``DOCTORDESK_AUTH_CACHE_SECONDS=0``), so every open reads its token from the database, as after a restart or
  once a client's cache entry has lapsed. The same raw-socket client (uvloop, 250 connects in flight) opens as many
  plain keep-alive SSE connections to ``bench/bare_sse_app.py``; rounds alternate bare and service. Target: time
  to all connected ≤ 1.5× the bare one (medians over the rounds).
- Churn: streams opened and closed in batches (tokens and clients reused in turn); after each batch, once the
  server counts no open stream, its RSS. Target: the last batch within 10 % of the first.

Environment: ``BENCH_STREAMS_OPEN`` (default 5000), ``BENCH_STREAMS_ROUNDS`` (3), ``BENCH_STREAMS_CHURN`` (100000),
``BENCH_STREAMS_BATCH`` (1000).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import insert, select

from bench.bare_sse_app import BARE_SSE_PATH
from bench.bench_realtime import open_many, rss_kib, run, table
from bench.common import Server, database_label, machine
from doctordesk.services.accounts.auth import token_hash
from doctordesk.store.db import create_engine
from doctordesk.store.tables import AccessToken, User
from doctordesk.web.routers.stream import STREAM_PATH

OPEN = int(os.environ.get("BENCH_STREAMS_OPEN", "5000"))
ROUNDS = int(os.environ.get("BENCH_STREAMS_ROUNDS", "3"))
CHURN = int(os.environ.get("BENCH_STREAMS_CHURN", "100000"))
BATCH = int(os.environ.get("BENCH_STREAMS_BATCH", "1000"))
TARGET_RATIO = 1.5
RSS_TOLERANCE = 0.10
SERVICE_ENV = {
    "DOCTORDESK_AUTH_CACHE_SECONDS": "0",
    "DOCTORDESK_HEARTBEAT_SECONDS": "25",
    "DOCTORDESK_PUSH_ADAPTER": "none",
}


class Conn:
    """One open SSE connection over a raw socket (the opening frame read)."""

    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


async def connect(port: int, path: str, headers: dict[str, str]) -> Conn:
    """Send the GET, insist on a 200, and return once the first SSE event (ended by a blank line) has arrived."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    writer.write("\r\n".join(lines).encode())
    buffer = b""
    async with asyncio.timeout(60):
        while b"\r\n\r\n" not in buffer:
            buffer += await _read(reader, buffer)
        head, _, body = buffer.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"stream refused: {buffer[:300]!r}")
        while b"\n\n" not in body:
            body += await _read(reader, buffer + body)
    return Conn(reader, writer)


async def _read(reader: asyncio.StreamReader, so_far: bytes) -> bytes:
    data = await reader.read(65536)
    if not data:
        raise RuntimeError(f"connection closed: {so_far[:300]!r}")
    return data


async def tokens_for(database_url: str, username: str, count: int) -> list[str]:
    """``count`` fresh access tokens of ``username``, written straight into the server's database."""
    tokens = [secrets.token_urlsafe(32) for _ in range(count)]
    now = datetime.now(UTC)
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            user_id = (await conn.execute(select(User.id).where(User.username == username))).scalar_one()
            rows = [
                {
                    "token_hash": token_hash(t),
                    "user_id": user_id,
                    "created_at": now,
                    "expires_at": now + timedelta(hours=12),
                }
                for t in tokens
            ]
            for start in range(0, len(rows), 1000):
                await conn.execute(insert(AccessToken), rows[start : start + 1000])
    finally:
        await engine.dispose()
    return tokens


async def record_presence(url: str, tokens: list[str]) -> None:
    """Each client shows its appointment list (a PUT), so the server holds its screen when its stream opens."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        queue = list(enumerate(tokens))

        async def worker() -> None:
            while queue:
                i, token = queue.pop()
                r = await http.put(
                    "/profile/appointments", headers={"Authorization": f"Bearer {token}", "X-Client-Id": f"s{i}"}
                )
                r.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(8)))


async def open_streams(port: int, tokens: list[str], count: int, offset: int = 0) -> list[Conn]:
    async def one(port: int, i: int) -> Conn:
        n = (offset + i) % len(tokens)
        return await connect(port, STREAM_PATH, {"Authorization": f"Bearer {tokens[n]}", "X-Client-Id": f"s{n}"})

    conns: list[Conn] = await open_many(port, count, one)
    return conns


async def open_bare(port: int, count: int) -> list[Conn]:
    async def one(port: int, _i: int) -> Conn:
        return await connect(port, BARE_SSE_PATH, {"Connection": "keep-alive"})

    conns: list[Conn] = await open_many(port, count, one)
    return conns


async def open_count(http: httpx.AsyncClient) -> float:
    for line in (await http.get("/metrics")).text.splitlines():
        if line.startswith("doctordesk_open_streams "):
            return float(line.split()[1])
    raise RuntimeError("no doctordesk_open_streams in /metrics")


async def until_closed(http: httpx.AsyncClient) -> None:
    """Wait until the server has closed every stream (it noticed each client going away)."""
    deadline = time.monotonic() + 60
    while await open_count(http) > 0:
        if time.monotonic() > deadline:
            raise RuntimeError("streams still open 60 s after their clients closed them")
        await asyncio.sleep(0.05)


def close_all(conns: list[Conn]) -> None:
    for c in conns:
        c.close()


async def measure(service: Server, bare: Server) -> int:
    tokens = await tokens_for(service.database_url, "doctor1", OPEN)
    await record_presence(service.url, tokens)
    rows: list[list[Any]] = []
    bare_s: list[float] = []
    service_s: list[float] = []
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        for r in range(1, ROUNDS + 1):
            started = time.perf_counter()
            conns = await open_bare(bare.port, OPEN)
            bare_s.append(time.perf_counter() - started)
            close_all(conns)
            await asyncio.sleep(1.0)
            started = time.perf_counter()
            conns = await open_streams(service.port, tokens, OPEN)
            service_s.append(time.perf_counter() - started)
            opened = await open_count(http)
            close_all(conns)
            await until_closed(http)
            rows.append([r, f"{bare_s[-1]:.2f}", f"{service_s[-1]:.2f}", f"{service_s[-1] / bare_s[-1]:.2f}", opened])
        ratio = statistics.median(service_s) / statistics.median(bare_s)
        table(
            f"Open {OPEN:,} streams, each its own token and client with its screen recorded ({database_label()}); "
            f"seconds until all connected (target ≤ {TARGET_RATIO}× the bare SSE app)",
            ["round", "bare SSE app s", "service s", "ratio", "open on server"],
            rows,
        )
        print(f"median ratio {ratio:.2f} ({'met' if ratio <= TARGET_RATIO else 'MISSED'})")

        pid = service.process.pid  # type: ignore[union-attr]
        batches = max(1, CHURN // BATCH)
        rss: list[int] = []
        churn_started = time.perf_counter()
        for b in range(batches):
            conns = await open_streams(service.port, tokens, BATCH, offset=b * BATCH)
            close_all(conns)
            await until_closed(http)
            rss.append(rss_kib(pid))
        churn_s = time.perf_counter() - churn_started
    first, last = rss[0], rss[-1]
    drift = (last - first) / first
    table(
        f"Stream churn: {batches * BATCH:,} streams opened and closed in batches of {BATCH:,} in {churn_s:.1f} s; "
        f"server RSS after each batch (target: the last within {RSS_TOLERANCE:.0%} of the first)",
        ["batch", "RSS MiB", "vs first"],
        [[b + 1, f"{kib / 1024:.1f}", f"{(kib - first) / first:+.1%}"] for b, kib in enumerate(rss)],
    )
    within = abs(drift) <= RSS_TOLERANCE
    print(f"RSS after the last batch {drift:+.1%} from the first ({'met' if within else 'MISSED'})")
    return 0 if ratio <= TARGET_RATIO and within else 1


def main() -> int:
    print(f"Stream setup and churn; client event loop: uvloop; {machine()}")
    with Server(env=SERVICE_ENV, postgres=True) as service, Server(app="bench.bare_sse_app:create_app") as bare:
        result: list[int] = []

        async def body() -> None:
            result.append(await measure(service, bare))

        run(body())
    return result[0]


if __name__ == "__main__":
    raise SystemExit(main())
