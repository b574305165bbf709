"""What an open stream holds on the server, by allocating line (tracemalloc): ``python -m bench.stream_memory``.

One server (uvicorn on uvloop, ``BENCH_TRACE_HTTP``: `serve`'s protocol by default, ``httptools`` for uvicorn's)
under tracemalloc (bench/traced_uvicorn.py); ``BENCH_TRACE_WARM`` streams (500) are opened first, so that pools
and caches are not counted, then ``BENCH_TRACE_STREAMS`` more (5000), each with a token and a client of its own as
in ``bench_streams``' idle part. Printed: the Python allocations the server grew by, per stream, by the line that
made them (the lines over ``BENCH_TRACE_MIN`` bytes per stream, 16), and the server's RSS growth per stream
beside them. Not a benchmark with a target (``python -m bench`` does not run it): a tool for finding what to cut.
"""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.bench_realtime import open_many, rss_kib, run
from bench.bench_streams import SERVICE_ENV, Held, record_presence, tokens_for
from bench.common import SERVE_PROTOCOL, Server, machine
from doctordesk.web.routers.stream import STREAM_PATH

WARM = int(os.environ.get("BENCH_TRACE_WARM", "500"))
STREAMS = int(os.environ.get("BENCH_TRACE_STREAMS", "5000"))
HTTP = os.environ.get("BENCH_TRACE_HTTP", SERVE_PROTOCOL)
MIN_BYTES = float(os.environ.get("BENCH_TRACE_MIN", "16"))


def _snapshot(pid: int, directory: Path, n: int) -> tracemalloc.Snapshot:
    os.kill(pid, signal.SIGUSR1)
    path = directory / f"snapshot-{n}.pickle"
    deadline = time.monotonic() + 120
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the server wrote no snapshot")
        time.sleep(0.2)
    return tracemalloc.Snapshot.load(str(path))


async def _measure(service: Server, directory: Path) -> None:
    pid = service.process.pid  # type: ignore[union-attr]
    tokens = await tokens_for(service.database_url, "doctor1", WARM + STREAMS)
    await record_presence(service.url, tokens)
    loop = asyncio.get_running_loop()

    async def one(port: int, i: int) -> Held:
        request = (
            f"GET {STREAM_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {tokens[i]}\r\n"
            f"X-Client-Id: s{i}\r\n\r\n"
        ).encode()
        opened: asyncio.Future[None] = loop.create_future()
        _, protocol = await loop.create_connection(lambda: Held(request, opened), "127.0.0.1", port)
        async with asyncio.timeout(60):
            await opened
        return protocol

    held = await open_many(service.port, WARM, one)
    await asyncio.sleep(2.0)
    before = await asyncio.to_thread(_snapshot, pid, directory, 1)
    rss_before = rss_kib(pid)
    held += await open_many(service.port, STREAMS, lambda port, i: one(port, WARM + i))
    await asyncio.sleep(2.0)
    rss_after = rss_kib(pid)
    after = await asyncio.to_thread(_snapshot, pid, directory, 2)
    load = os.getloadavg()[0]
    for h in held:
        if h.transport is not None:
            h.transport.close()
    lines = after.compare_to(before, "lineno")
    total = sum(s.size_diff for s in lines) / STREAMS
    print(f"\nPer stream over {STREAMS:,} streams (after {WARM:,}), protocol {HTTP}; load average {load:.1f}")
    rss = (rss_after - rss_before) * 1024 / STREAMS
    print(f"RSS growth per stream (traced: tracemalloc's own bookkeeping included): {rss:,.0f} B")
    print(f"Python allocations per stream: {total:,.0f} B\n")
    print("| bytes per stream | allocated at |\n|---:|---|")
    for stat in lines:
        per = stat.size_diff / STREAMS
        if abs(per) >= MIN_BYTES:
            frame = stat.traceback[0]
            where = "/".join(Path(frame.filename).parts[-3:])
            print(f"| {per:,.0f} | {where}:{frame.lineno} |")


def main() -> int:
    print(f"Stream memory by allocating line; {machine()}")
    with tempfile.TemporaryDirectory(prefix="stream-memory-") as tmp:
        env = {**SERVICE_ENV, "BENCH_TRACE_DIR": tmp}
        with Server(env=env, http=HTTP, runner="bench.traced_uvicorn") as service:
            run(_measure(service, Path(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
