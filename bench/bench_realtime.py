"""Real-time benchmarks: idle streams and memory per stream, fan-out latency, send → SSE latency, push throughput.

Run: ``python -m bench.bench_realtime`` (or ``make bench``). Each part starts its own server on loopback (uvicorn
in a subprocess, SQLite, the demo clinic) and talks to it over raw sockets, so the client side stays light at
thousands of streams. Baselines are measured in the same run: plain keep-alive connections (memory), the POST's
own round trip (latency), and the dispatcher against an instant partner (push throughput).

Environment: ``BENCH_STREAMS`` (default ``1000,5000``), ``DOCTORDESK_BENCH_POSTGRES_URL`` (default: the server of
``DOCTORDESK_TEST_POSTGRES_URL``) for the push part, which creates a database of its own there and drops it after.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from tests.support.live import LiveServer

from bench.common import own_postgres_databases, percentile

STREAM_SIZES = [int(n) for n in os.environ.get("BENCH_STREAMS", "1000,5000").split(",")]
PRESENCE_CLIENTS = 200
EVENTS_PER_SIZE = 10
EVENT_RATE = 5.0
SENDS = 150
SEND_RATE = 50.0
PUSH_ROWS = 6000


# --- helpers ---------------------------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    print(f"\n{title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=False)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)))


def server(directory: Path, **env: str) -> LiveServer:
    live = LiveServer(
        directory,
        extra_env={
            "DOCTORDESK_HEARTBEAT_SECONDS": "25",
            "DOCTORDESK_CHAT_SEND_PER_MINUTE": "100000",
            "DOCTORDESK_PUSH_ADAPTER": "none",
            **env,
        },
    )
    if not (directory / "doctordesk.db").exists():
        live.prepare()
    else:
        live.data_dir.mkdir(parents=True, exist_ok=True)
    return live.start()


class RawStream:
    """One SSE stream over a raw socket: records when each non-empty data frame arrives."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.arrivals: list[float] = []
        self.task: asyncio.Task[None] | None = None

    async def pump(self) -> None:
        try:
            while chunk := await self.reader.read(65536):
                if b"data: /" in chunk or b"data: T" in chunk:
                    self.arrivals.append(time.perf_counter())
        except (OSError, asyncio.CancelledError):
            pass

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.writer.close()


async def open_raw(port: int, path: str, headers: dict[str, str], *, until: bytes) -> tuple[Any, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    writer.write("\r\n".join(lines).encode())
    await writer.drain()
    buffer = b""
    while until not in buffer:
        data = await reader.read(65536)
        if not data:
            raise RuntimeError(f"connection closed: {buffer[:200]!r}")
        buffer += data
    return reader, writer


async def open_many(port: int, count: int, make: Any) -> list[Any]:
    opened: list[Any] = []
    for start in range(0, count, 250):
        opened.extend(await asyncio.gather(*(make(port, i) for i in range(start, min(count, start + 250)))))
    return opened


async def login(http: httpx.AsyncClient, username: str) -> str:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    token: str = response.json()["access_token"]
    return token


def walk(elements: list[dict[str, Any]]) -> Any:
    for e in elements:
        yield e
        yield from walk(e.get("children", []))


async def chat_appointment(http: httpx.AsyncClient, doctor: str, support: str) -> int:
    page = (await http.put("/profile/appointments", headers={"Authorization": f"Bearer {doctor}"})).json()
    for e in walk(page["elements"]):
        if e["id"].startswith("status-"):
            a = int(e["id"].split("-", 1)[1])
            r = await http.put(
                "/profile/messages/user-chat",
                params={"appointment-id": a},
                headers={"Authorization": f"Bearer {support}", "X-Client-Id": "bench-support"},
            )
            if r.status_code == 200:
                return a
    raise RuntimeError("no chat-enabled appointment")


# --- 1 + 2: idle streams, memory, fan-out ----------------------------------------------------------------------


async def idle_and_fanout(work: Path) -> None:
    # Baseline: memory of plain idle keep-alive connections, in a fresh server process.
    live = server(work)
    base_rows = []
    try:
        pid = live.process.pid  # type: ignore[union-attr]
        count = max(STREAM_SIZES)
        await asyncio.sleep(0.5)
        before = rss_kib(pid)

        async def keepalive(port: int, _i: int) -> Any:
            return await open_raw(port, "/healthz", {"Connection": "keep-alive"}, until=b'"ok"}')

        conns = await open_many(live.port, count, keepalive)
        await asyncio.sleep(0.5)
        base_rows.append(("idle keep-alive connections (baseline)", count, f"{(rss_kib(pid) - before) / count:.1f}"))
        for _, writer in conns:
            writer.close()
    finally:
        live.stop()

    live = server(work)
    rows = []
    fan_rows = []
    streams: list[RawStream] = []
    try:
        pid = live.process.pid  # type: ignore[union-attr]
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            doctor = await login(http, "doctor1")
            support = await login(http, "support1")
            appointment = await chat_appointment(http, doctor, support)
            for c in range(PRESENCE_CLIENTS):  # the clients' active screen: doctor1's appointment list
                await http.put(
                    "/profile/appointments", headers={"Authorization": f"Bearer {doctor}", "X-Client-Id": f"c{c}"}
                )
            await asyncio.sleep(0.5)
            before = rss_kib(pid)

            async def stream(port: int, i: int) -> RawStream:
                headers = {"Authorization": f"Bearer {doctor}", "X-Client-Id": f"c{i % PRESENCE_CLIENTS}"}
                reader, writer = await open_raw(port, "/profile/stream", headers, until=b"\n\n")
                s = RawStream(reader, writer)
                s.task = asyncio.create_task(s.pump())
                return s

            for size in STREAM_SIZES:
                started = time.perf_counter()
                streams.extend(await open_many(live.port, size - len(streams), stream))
                opened_in = time.perf_counter() - started
                await asyncio.sleep(1.0)
                per = (rss_kib(pid) - before) / len(streams)
                rows.append((f"idle SSE streams (opened in {opened_in:.1f} s)", len(streams), f"{per:.1f}"))
                # Fan-out: a chat message in one of doctor1's threads touches every list (unread indicator).
                for s in streams:
                    s.arrivals.clear()
                sends: list[float] = []
                post_ms: list[float] = []
                for n in range(EVENTS_PER_SIZE):
                    t0 = time.perf_counter()
                    sends.append(t0)
                    r = await http.post(
                        "/profile/messages/send-message",
                        headers={"Authorization": f"Bearer {support}", "X-Client-Id": "bench-support"},
                        data={"content": f"fan-out {size} #{n}", "appointment-id": str(appointment)},
                    )
                    post_ms.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200, r.text
                    await asyncio.sleep(max(0.0, 1 / EVENT_RATE - (time.perf_counter() - t0)))
                await asyncio.sleep(1.0)
                latencies = []
                for s in streams:
                    for i, t in enumerate(s.arrivals[:EVENTS_PER_SIZE]):
                        latencies.append((t - sends[i]) * 1000)
                got = len(latencies) / (len(streams) * EVENTS_PER_SIZE)
                fan_rows.append(
                    (
                        len(streams),
                        f"{EVENT_RATE:.0f}/s",
                        f"{got:.1%}",
                        f"{statistics.median(post_ms):.1f}",
                        f"{percentile(latencies, 50):.1f}",
                        f"{percentile(latencies, 99):.1f}",
                        f"{max(latencies):.1f}",
                    )
                )
    finally:
        for s in streams:
            s.close()
        live.stop()
    table(
        "Idle connections held by one server process (RSS growth; target ≤ 40 KiB per stream)",
        ["connections", "count", "KiB each"],
        base_rows + rows,
    )
    table(
        "Fan-out of one chat message to every stream whose screen shows it (ms from POST start to frame read; "
        "targets p99 ≤ 100 ms at 1,000, ≤ 500 ms at 5,000)",
        ["streams", "events", "delivered", "POST p50 (baseline)", "p50", "p99", "max"],
        fan_rows,
    )


# --- 3: send → the other participant's SSE ---------------------------------------------------------------------


async def end_to_end(work: Path) -> None:
    live = server(work)
    try:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
            doctor = await login(http, "doctor1")
            support = await login(http, "support1")
            appointment = await chat_appointment(http, doctor, support)
            reader, writer = await open_raw(
                live.port,
                "/profile/stream",
                {"Authorization": f"Bearer {support}", "X-Client-Id": "bench-support"},
                until=b"\n\n",
            )
            s = RawStream(reader, writer)
            s.task = asyncio.create_task(s.pump())
            headers = {"Authorization": f"Bearer {doctor}", "X-Client-Id": "bench-doctor"}
            for n in range(10):  # warm-up
                await http.post(
                    "/profile/messages/send-message",
                    headers=headers,
                    data={"content": f"warm {n}", "appointment-id": str(appointment)},
                )
            await asyncio.sleep(0.3)
            s.arrivals.clear()
            sends, post_ms = [], []
            for n in range(SENDS):
                t0 = time.perf_counter()
                sends.append(t0)
                r = await http.post(
                    "/profile/messages/send-message",
                    headers=headers,
                    data={"content": f"message {n}", "appointment-id": str(appointment)},
                )
                post_ms.append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 200, r.text
                await asyncio.sleep(max(0.0, 1 / SEND_RATE - (time.perf_counter() - t0)))
            await asyncio.sleep(0.5)
            s.close()
            latencies = [(t - sends[i]) * 1000 for i, t in enumerate(s.arrivals[:SENDS])]
    finally:
        live.stop()
    table(
        f"Send-message POST → the other participant's SSE message, {SEND_RATE:.0f} sends/s "
        "(targets p50 ≤ 15 ms, p99 ≤ 60 ms)",
        ["measure", "n", "p50 ms", "p99 ms", "max ms"],
        [
            (
                "POST round trip (baseline)",
                len(post_ms),
                f"{percentile(post_ms, 50):.1f}",
                f"{percentile(post_ms, 99):.1f}",
                f"{max(post_ms):.1f}",
            ),
            (
                "POST start → SSE frame",
                len(latencies),
                f"{percentile(latencies, 50):.1f}",
                f"{percentile(latencies, 99):.1f}",
                f"{max(latencies):.1f}",
            ),
        ],
    )


# --- 4: push outbox throughput ---------------------------------------------------------------------------------


async def push_throughput(url: str) -> None:
    from datetime import UTC, datetime

    from sqlalchemy import insert, select, text
    from tests.support.push_stub import PushStub

    from doctordesk.config import Settings
    from doctordesk.domain.clock import SystemClock
    from doctordesk.realtime.metrics import Metrics
    from doctordesk.realtime.outbox import Due
    from doctordesk.realtime.push import GorushAdapter, Outcome
    from doctordesk.store.db import Database
    from doctordesk.store.migrate import upgrade
    from doctordesk.store.realtime_tables import Device, PushOutbox
    from doctordesk.store.tables import User
    from doctordesk.workers.push_dispatcher import Dispatcher

    db = Database(url)
    await upgrade(db.engine)

    class InstantPartner:
        batch_size = 500

        async def send(self, batch: Sequence[Due]) -> Outcome:
            return Outcome(sent=[d.id for d in batch])

        async def close(self) -> None:
            return None

    async def fill() -> None:
        now = datetime.now(UTC)
        async with db.transaction() as session:
            await session.execute(text("TRUNCATE push_outbox, devices RESTART IDENTITY CASCADE"))
            user_id = await session.scalar(select(User.id).limit(1))
            if user_id is None:
                user_id = await session.scalar(
                    insert(User)
                    .values(
                        username="bench",
                        password_hash="x",
                        role="patient",
                        display_name="Bench",
                        active=True,
                        created_at=now,
                    )
                    .returning(User.id)
                )
            await session.execute(
                insert(Device),
                [
                    {
                        "device_key": f"d{n}",
                        "platform": "ios" if n % 2 else "android",
                        "push_token": f"tok-{n}",
                        "user_id": user_id,
                        "last_active_at": now,
                        "token_updated_at": now,
                    }
                    for n in range(1000)
                ],
            )
            await session.execute(
                insert(PushOutbox),
                [
                    {
                        "notification_id": f"n-{n}",
                        "device_id": 1 + n % 1000,
                        "user_id": user_id,
                        "text": "Approved",
                        "data": "Timeout",
                        "kind": "bench",
                        "created_at": now,
                        "next_attempt_at": now,
                        "attempts": 0,
                        "status": "pending",
                    }
                    for n in range(PUSH_ROWS)
                ],
            )

    settings = Settings(database_url=url)
    rows = []
    stub = PushStub()
    stub.up()
    try:
        for label, workers, make in [
            ("instant partner, 1 dispatcher (baseline: database only)", 1, lambda: InstantPartner()),
            ("Gorush stub over HTTP, 1 dispatcher", 1, lambda: GorushAdapter(stub.url)),
            ("Gorush stub over HTTP, 2 dispatchers (SKIP LOCKED)", 2, lambda: GorushAdapter(stub.url)),
        ]:
            await fill()
            dispatchers = [
                Dispatcher(db, make(), settings=settings, clock=SystemClock(), metrics=Metrics())
                for _ in range(workers)
            ]

            async def drain(d: Dispatcher) -> None:
                while await d.round():
                    pass

            started = time.perf_counter()
            await asyncio.gather(*(drain(d) for d in dispatchers))
            elapsed = time.perf_counter() - started
            for d in dispatchers:
                await d.adapter.close()
            async with db.read() as session:
                sent = await session.scalar(text("SELECT count(*) FROM push_outbox WHERE status = 'sent'"))
            rows.append((label, sent, f"{elapsed:.2f}", f"{PUSH_ROWS / elapsed:,.0f}"))
    finally:
        stub.down()
        await db.dispose()
    table(
        "Push outbox throughput on PostgreSQL (target ≥ 1,000 notifications/s)",
        ["dispatch", "sent", "seconds", "notifications/s"],
        rows,
    )


def run(main: Any) -> None:
    """Run the client side on uvloop, as the server runs: the one client process stands in for thousands of
    separate clients, so its own reading cost should stay as small as possible inside the measured latency."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        asyncio.run(main)
        return
    uvloop.run(main)


def main() -> None:
    print("Real-time benchmarks (docs/realtime.md); client event loop: uvloop")
    with tempfile.TemporaryDirectory(prefix="bench-realtime-") as tmp:
        work = Path(tmp)
        run(idle_and_fanout(work / "server"))
        run(end_to_end(work / "server"))
    server = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL") or os.environ.get(
        "DOCTORDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://root@127.0.0.1:5432/test"
    )
    try:
        with own_postgres_databases(server, ["doctordesk_bench_push"]) as (url,):
            run(push_throughput(url))
    except OSError as exc:  # no PostgreSQL here: say so and skip this part
        print(f"\nPush outbox throughput: skipped ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main()
