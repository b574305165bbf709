"""uvicorn with tracemalloc at hand, for measuring what a server holds per connection (bench/stream_memory.py):
``python -m bench.traced_uvicorn <uvicorn's arguments>``. The first SIGUSR1 starts tracing (the server starts at
its usual speed: the app's imports under tracemalloc took minutes on a loaded machine); each one writes a snapshot
of the Python allocations traced so far (those made since tracing started and still alive) to
``$BENCH_TRACE_DIR/snapshot-<n>.pickle`` (n = 1, 2, ...)."""

from __future__ import annotations

import os
import signal
import tracemalloc
from pathlib import Path
from types import FrameType

import uvicorn.main

FRAMES = 1  # the allocating line: enough to tell the parts apart, and cheap enough for thousands of streams
_taken = [0]


def _snapshot(_signum: int, _frame: FrameType | None) -> None:
    if not tracemalloc.is_tracing():
        tracemalloc.start(FRAMES)
    _taken[0] += 1
    path = Path(os.environ["BENCH_TRACE_DIR"]) / f"snapshot-{_taken[0]}.pickle"
    tracemalloc.take_snapshot().dump(str(path.with_suffix(".tmp")))
    path.with_suffix(".tmp").rename(path)


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, _snapshot)
    uvicorn.main.main()
