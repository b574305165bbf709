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
- Idle: ``BENCH_STREAMS_IDLE`` streams (50,000) opened on one server process from ``BENCH_STREAMS_SOURCES``
  loopback source addresses (127.0.0.2 on; one address has ≈ 28,000 ephemeral ports), each its own token and
  client, held ``BENCH_STREAMS_HOLD`` seconds (300) with the server's heartbeats (``DOCTORDESK_HEARTBEAT_SECONDS``
  25), then a fan-out: one chat message in the doctor's thread reaches every stream's list. Reported: the
  server's RSS per stream (its growth over opening the second half of them; and over the whole), the heartbeats
  each stream heard and the longest silence of any stream, the fan-out's delivery. Targets: RSS per stream
  ≤ 12 KiB, no stream silent longer than the heartbeat interval, every stream reached. The file limit
  (``RLIMIT_NOFILE``) is raised to its hard limit; when that hard limit is below the streams asked for (one
  descriptor each, in the server and in this client), the streams are as many as it allows, and the table says
  so.

Environment: ``BENCH_STREAMS_OPEN`` (default 5000), ``BENCH_STREAMS_ROUNDS`` (3), ``BENCH_STREAMS_CHURN`` (100000),
``BENCH_STREAMS_BATCH`` (1000), ``BENCH_STREAMS_IDLE`` (50000), ``BENCH_STREAMS_SOURCES`` (4, at most 250),
``BENCH_STREAMS_HOLD`` (300), ``BENCH_STREAMS_PARTS`` (``open,idle``: ``open`` is open and churn).
"""

from __future__ import annotations

import asyncio
import os
import resource
import secrets
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import insert, select

from bench.bare_sse_app import BARE_SSE_PATH
from bench.bench_realtime import chat_appointment, login, open_many, rss_kib, run, table
from bench.common import Server, database_label, machine, percentile
from doctordesk.services.accounts.auth import token_hash
from doctordesk.store.db import create_engine
from doctordesk.store.tables import AccessToken, User
from doctordesk.web.routers.stream import STREAM_PATH

OPEN = int(os.environ.get("BENCH_STREAMS_OPEN", "5000"))
ROUNDS = int(os.environ.get("BENCH_STREAMS_ROUNDS", "3"))
CHURN = int(os.environ.get("BENCH_STREAMS_CHURN", "100000"))
BATCH = int(os.environ.get("BENCH_STREAMS_BATCH", "1000"))
IDLE = int(os.environ.get("BENCH_STREAMS_IDLE", "50000"))
SOURCES = max(1, min(250, int(os.environ.get("BENCH_STREAMS_SOURCES", "4"))))
HOLD = float(os.environ.get("BENCH_STREAMS_HOLD", "300"))
PARTS = set(os.environ.get("BENCH_STREAMS_PARTS", "open,idle").split(","))
PORTS_PER_SOURCE = 28_000  # the default ephemeral port range (32768-60999), a little less
SPARE_FILES = 300  # descriptors a process keeps for its own files, database and listening sockets
FANOUT_EVENTS = 5
TARGET_KIB = 12.0
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

        await asyncio.gather(*(worker() for _ in range(16)))


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


# --- idle streams on one process ----------------------------------------------------------------------------


def file_limit() -> int:
    """Raise this process's descriptor limit to its hard limit (the server started after inherits it); the
    limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


class Held(asyncio.Protocol):
    """One idle stream as its client sees it: the head and first event, then the heartbeats (counted, with the
    longest silence between two frames) and the real-time messages (the arrival of each)."""

    __slots__ = (
        "request",
        "opened",
        "transport",
        "buffer",
        "last",
        "longest",
        "heartbeats",
        "timeouts",
        "arrivals",
        "closed",
    )

    def __init__(self, request: bytes, opened: asyncio.Future[None]) -> None:
        self.request = request
        self.opened: asyncio.Future[None] | None = opened
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.last = 0.0
        self.longest = 0.0
        self.heartbeats = 0
        self.timeouts = 0  # bare ``Timeout`` messages: refresh every screen
        self.arrivals: list[float] = []
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport subclass
        self.transport.write(self.request)  # type: ignore[union-attr]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if self.opened is not None:
            self.buffer += data
            head, _, body = self.buffer.partition(b"\r\n\r\n")
            if not body or b"\n\n" not in body:
                return
            if not head.startswith(b"HTTP/1.1 200"):
                self.opened.set_exception(RuntimeError(f"stream refused: {self.buffer[:300]!r}"))
            else:
                self.opened.set_result(None)
            self.opened, self.buffer, self.last = None, b"", now
            return
        self.longest = max(self.longest, now - self.last)
        self.last = now
        self.heartbeats += data.count(b"data: \n\n")
        self.timeouts += data.count(b"data: Timeout\n\n")
        if b"data: /" in data or b"data: T" in data:
            self.arrivals.append(now)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.opened is not None and not self.opened.done():
            self.opened.set_exception(RuntimeError(f"connection closed ({exc}): {self.buffer[:300]!r}"))


def source_address(i: int) -> str:
    return f"127.0.0.{2 + i % SOURCES}"


async def hold_idle(service: Server, count: int, limited_by: str) -> int:
    interval = float(SERVICE_ENV["DOCTORDESK_HEARTBEAT_SECONDS"])
    tokens = await tokens_for(service.database_url, "doctor1", count)
    started = time.perf_counter()
    await record_presence(service.url, tokens)
    print(f"{count:,} tokens written and screens recorded in {time.perf_counter() - started:.0f} s")
    pid = service.process.pid  # type: ignore[union-attr]
    loop = asyncio.get_running_loop()
    held: list[Held] = []

    async def one(port: int, i: int) -> Held:
        lines = [
            f"GET {STREAM_PATH} HTTP/1.1",
            "Host: 127.0.0.1",
            f"Authorization: Bearer {tokens[i]}",
            f"X-Client-Id: s{i}",
            "",
            "",
        ]
        opened: asyncio.Future[None] = loop.create_future()
        _, protocol = await loop.create_connection(
            lambda: Held("\r\n".join(lines).encode(), opened), "127.0.0.1", port, local_addr=(source_address(i), 0)
        )
        async with asyncio.timeout(60):
            await opened
        return protocol

    async with httpx.AsyncClient(base_url=service.url, timeout=60) as http:
        doctor = await login(http, "doctor1")
        support = await login(http, "support1")
        appointment = await chat_appointment(http, doctor, support)
        await asyncio.sleep(1.0)
        before = rss_kib(pid)
        started = time.perf_counter()
        half = count // 2
        held = await open_many(service.port, half, one)
        await asyncio.sleep(2.0)
        half_rss = rss_kib(pid)
        held += await open_many(service.port, count - half, lambda port, i: one(port, half + i))
        opened_s = time.perf_counter() - started
        await asyncio.sleep(2.0)
        opened_rss = rss_kib(pid)
        on_server = await open_count(http)
        load_open = os.getloadavg()[0]
        print(f"{count:,} streams open in {opened_s:.1f} s (load average {load_open:.1f}); holding {HOLD:.0f} s")
        for h in held:
            h.heartbeats, h.longest, h.last = 0, 0.0, time.perf_counter()
        await asyncio.sleep(HOLD)
        now = time.perf_counter()
        silent_now = max(now - h.last for h in held)
        longest = max(max(h.longest for h in held), silent_now)
        beats = sorted(h.heartbeats for h in held)
        closed = sum(h.closed for h in held)
        held_rss = rss_kib(pid)
        # The fan-out: a chat message in one of the doctor's threads touches every list (its unread indicator).
        sends: list[float] = []
        for h in held:
            h.arrivals.clear()
        for n in range(FANOUT_EVENTS):
            t0 = time.perf_counter()
            sends.append(t0)
            r = await http.post(
                "/profile/messages/send-message",
                headers={"Authorization": f"Bearer {support}", "X-Client-Id": "bench-support"},
                data={"content": f"fan-out #{n}", "appointment-id": str(appointment)},
            )
            r.raise_for_status()
            await asyncio.sleep(max(0.0, 2.0 - (time.perf_counter() - t0)))
        await asyncio.sleep(5.0)
        latencies = [(t - sends[i]) * 1000 for h in held for i, t in enumerate(h.arrivals[:FANOUT_EVENTS])]
        reached = sum(1 for h in held if len(h.arrivals) >= FANOUT_EVENTS)
        load_end = os.getloadavg()[0]
    for h in held:
        if h.transport is not None:
            h.transport.close()
    # Per stream: the growth over the second half (what the first streams alone pay, pools and caches, is not).
    per_stream = (opened_rss - half_rss) / (count - half)
    overall = (opened_rss - before) / count
    expected = int(HOLD // interval)
    table(
        f"Idle streams on one server process ({database_label()}), from {SOURCES} source addresses{limited_by}; "
        f"load average {load_open:.1f} when open, {load_end:.1f} at the end",
        ["measure", "value"],
        [
            ["streams open (client / server)", f"{count - closed:,} / {on_server:,.0f}"],
            ["opened in", f"{opened_s:.1f} s"],
            [
                "server RSS before / half open / all open / after the hold",
                f"{before / 1024:.1f} / {half_rss / 1024:.1f} / {opened_rss / 1024:.1f} / {held_rss / 1024:.1f} MiB",
            ],
            [f"RSS per stream over the second half (target ≤ {TARGET_KIB:g} KiB)", f"{per_stream:.2f} KiB"],
            ["RSS growth over the whole opening, per stream", f"{overall:.2f} KiB"],
            [
                f"heartbeats per stream in {HOLD:.0f} s (interval {interval:g} s): min / median / max",
                f"{beats[0]} / {beats[len(beats) // 2]} / {beats[-1]} (at least {expected} expected)",
            ],
            [f"longest silence of any stream (target ≤ {interval:g} s + 1 s)", f"{longest:.1f} s"],
            ["streams closed during the hold", closed],
            [f"fan-out: streams that got all {FANOUT_EVENTS} messages", f"{reached:,} of {count:,}"],
            [
                "fan-out ms from POST start: p50 / p99 / max",
                f"{percentile(latencies, 50):.0f} / {percentile(latencies, 99):.0f} / {max(latencies, default=0):.0f}",
            ],
        ],
    )
    met = per_stream <= TARGET_KIB and longest <= interval + 1.0 and closed == 0 and reached == count
    print(f"idle streams: {'met' if met else 'MISSED'}")
    return 0 if met else 1


def idle_count() -> tuple[int, str]:
    """The streams the idle part opens, and why fewer than asked when the machine's limits say so."""
    limit = file_limit()
    count, why = IDLE, ""
    if limit - SPARE_FILES < count:
        count = limit - SPARE_FILES
        why = f" (RLIMIT_NOFILE's hard limit {limit:,} caps it below the {IDLE:,} asked for)"
    if SOURCES * PORTS_PER_SOURCE < count:
        raise SystemExit(f"{count:,} streams need more than {SOURCES} source addresses: raise BENCH_STREAMS_SOURCES")
    return count, why


def main() -> int:
    print(f"Stream setup, churn and idle streams; client event loop: uvloop; {machine()}")
    result: list[int] = []
    if "open" in PARTS:
        with Server(env=SERVICE_ENV, postgres=True) as service, Server(app="bench.bare_sse_app:create_app") as bare:

            async def body() -> None:
                result.append(await measure(service, bare))

            run(body())
    if "idle" in PARTS:
        count, why = idle_count()
        with Server(env=SERVICE_ENV, postgres=True) as service:

            async def idle() -> None:
                result.append(await hold_idle(service, count, why))

            run(idle())
    return max(result, default=0)


if __name__ == "__main__":
    raise SystemExit(main())
