"""The bench-only probed service: the real app, plus what its event loop and collector did while a benchmark ran,
read (and reset) at ``GET /api/bench-probe``. Never used by the product.

- the collector: every pass's generation, wall time and CPU time of its thread (``gc.callbacks``);
- the loop's lag: a task that asks to wake every ``TICK`` seconds and records how late it woke (a late wake-up is
  a stall of every request on the loop: something ran that long without yielding), and how much CPU the loop's
  thread used meanwhile: a late wake-up with little CPU is the machine's (the process was not scheduled, or waited
  for the interpreter), one with as much CPU as lag is the loop's own work;
- what ran in a stall: a watchdog thread that, when the loop's last wake-up is ``STALL`` seconds old and the loop's
  thread used most of that time on a CPU, takes the loop thread's stack (``sys._current_frames``) and counts its
  innermost frames. A collector's pass holds the interpreter, so its stalls show in the first list, not here.

- with asyncio's own event loop (``UVICORN_LOOP=asyncio``; uvloop's callbacks cannot be wrapped): every callback's
  CPU time, by what it ran (a request's task: its method and path, digits as ``N``), so a stall is named by the
  request that made it, however loaded the machine is.

``python -m uvicorn bench.probed_app:create_app --factory`` (``bench.common.Server(app=...)``).
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import pstats
import re
import sys
import threading
import time
import traceback
from collections import Counter
from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse
from sqlalchemy import event
from sqlalchemy.engine import Engine

from doctordesk.app import Service
from doctordesk.app import create_app as create_service
from doctordesk.web import route_table

PROBE_PATH = "/api/bench-probe"
PROFILE_PATH = "/api/bench-profile"
SAMPLE_PATH = "/api/bench-sample"
TICK = 0.005
STALL = 0.010  # the loop busy this long without waking the probe: a stall worth a stack
FRAMES = 4
SLOW_STEP_MS = 3.0  # innermost frames kept of a stall's stack


class Probe:
    """What the loop and the collector did since the last reset."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()
        self._gc_started = (0.0, 0.0)
        self.beat = (time.perf_counter(), 0.0)  # the loop's last wake-up: wall clock, the loop thread's CPU
        self.loop_clock: int | None = None  # the loop thread's CPU clock
        self.loop_thread: int | None = None
        self.callbacks: Callbacks | None = None
        self.statements = Statements()
        self.statements.install()

    def reset(self) -> None:
        self.passes: list[tuple[int, float, float]] = []  # (generation, wall ms, CPU ms)
        self.lags: list[tuple[float, float]] = []  # every wake-up: (ms late, CPU ms of the loop's thread meanwhile)
        self.stalls: Counter[str] = Counter()
        self.idle_stalls = 0  # stalls the watchdog saw with the loop's thread mostly off a CPU
        self.since = time.perf_counter()
        if getattr(self, "callbacks", None) is not None:
            self.callbacks.steps = {}  # type: ignore[union-attr]
            self.callbacks.slow = Counter()  # type: ignore[union-attr]
        if getattr(self, "statements", None) is not None:
            self.statements.times = {}

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = self._gc_started
            took = ((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000)
            self.passes.append((int(info["generation"]), *took))

    async def ticking(self) -> None:
        self.loop_thread = threading.get_ident()
        self.loop_clock = time.pthread_getcpuclockid(self.loop_thread)
        self.statements.thread = self.loop_thread
        while True:
            asked, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(TICK)
            now, cpu_now = time.perf_counter(), time.thread_time()
            self.beat = (now, cpu_now)
            self.lags.append(((now - asked - TICK) * 1000, (cpu_now - cpu) * 1000))

    def watch(self) -> None:
        """The watchdog thread: while the loop has not woken for ``STALL`` s of its thread's CPU time (it is busy, not
        waiting for a CPU), one stack every ``TICK``; a stall seen at ``STALL`` of wall time with less CPU is idle."""
        counted = 0.0
        while True:
            time.sleep(TICK)
            (beat, beat_cpu), clock = self.beat, self.loop_clock
            if clock is None or self.loop_thread is None:
                continue
            busy = time.clock_gettime(clock) - beat_cpu
            if busy < STALL:
                if time.perf_counter() - beat > STALL and counted != beat:
                    counted = beat
                    self.idle_stalls += 1
                continue
            frame = sys._current_frames().get(self.loop_thread)
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)
            inner = " < ".join(f"{_short(s.filename)}:{s.lineno} {s.name}" for s in reversed(stack[-FRAMES:]))
            routes = [s for s in stack if "/doctordesk/web/routers/" in s.filename and "stream.py" not in s.filename]
            outer = f"{_short(routes[-1].filename)} {routes[-1].name}" if routes else "-"
            with self.lock:
                self.stalls[f"{inner} || from {outer}"] += 1

    def report(self) -> dict[str, Any]:
        lags = sorted(lag for lag, _ in self.lags)
        cpus = sorted(cpu for _, cpu in self.lags)
        by_generation: dict[str, dict[str, float]] = {}
        for generation in (0, 1, 2):
            passes = [(wall, cpu) for g, wall, cpu in self.passes if g == generation]
            by_generation[str(generation)] = {
                "passes": len(passes),
                "cpu_total_ms": round(sum(cpu for _, cpu in passes), 1),
                "cpu_max_ms": round(max((cpu for _, cpu in passes), default=0.0), 2),
                "wall_max_ms": round(max((wall for wall, _ in passes), default=0.0), 2),
                "cpu_over_5ms": sum(cpu > 5 for _, cpu in passes),
            }
        with self.lock:
            stalls = self.stalls.most_common(25)
        return {
            "seconds": round(time.perf_counter() - self.since, 1),
            "gc": by_generation,
            "gc_objects": len(gc.get_objects()),
            "gc_frozen": gc.get_freeze_count(),
            "lag": {
                "wakeups": len(lags),
                "p50_ms": round(lags[len(lags) // 2], 2) if lags else 0.0,
                "p99_ms": round(lags[int(len(lags) * 0.99)], 2) if lags else 0.0,
                "max_ms": round(lags[-1], 2) if lags else 0.0,
                "over_10ms": sum(lag > 10 for lag in lags),
                "over_30ms": sum(lag > 30 for lag in lags),
                # the loop thread's CPU between two wake-ups: the work a request arriving meanwhile waited behind
                "cpu_p99_ms": round(cpus[int(len(cpus) * 0.99)], 2) if cpus else 0.0,
                "cpu_max_ms": round(cpus[-1], 2) if cpus else 0.0,
                "cpu_over_5ms": sum(cpu > 5 for cpu in cpus),
                "cpu_over_10ms": sum(cpu > 10 for cpu in cpus),
                "cpu_over_20ms": sum(cpu > 20 for cpu in cpus),
            },
            "callbacks": self.callbacks.report() if self.callbacks is not None else None,
            "statements (n, total ms, max ms)": self.statements.report(),
            "busy_stalls": stalls,
            "idle_stalls": self.idle_stalls,
        }


class Callbacks:
    """Every callback's CPU time on asyncio's loop (``Handle._run`` wrapped), by what it ran."""

    def __init__(self) -> None:
        self.steps: dict[str, list[float]] = {}
        self.slow: Counter[str] = Counter()  # steps over SLOW_STEP_MS: where they started and ended

    def install(self, probe: Probe) -> None:
        run = asyncio.events.Handle._run
        callbacks = self

        def timed(handle: asyncio.events.Handle) -> None:
            label, at = _label(handle), _suspended(handle)
            started = time.thread_time()
            try:
                run(handle)
            finally:
                cpu = (time.thread_time() - started) * 1000
                callbacks.steps.setdefault(label, []).append(cpu)
                if cpu > SLOW_STEP_MS:
                    callbacks.slow[f"{label}: {at} -> {_suspended(handle)}"] += 1

        asyncio.events.Handle._run = timed  # type: ignore[method-assign]
        probe.callbacks = self

    def report(self) -> dict[str, Any]:
        out = {}
        for label, cpus in self.steps.items():
            ordered = sorted(cpus)
            out[label] = {
                "n": len(ordered),
                "cpu_total_ms": round(sum(ordered), 1),
                "p50_ms": round(ordered[len(ordered) // 2], 3),
                "p99_ms": round(ordered[int(len(ordered) * 0.99)], 2),
                "max_ms": round(ordered[-1], 2),
                "over_5ms": sum(cpu > 5 for cpu in ordered),
                "over_10ms": sum(cpu > 10 for cpu in ordered),
            }
        out = dict(sorted(out.items(), key=lambda item: -item[1]["cpu_total_ms"])[:20])
        out["slow steps"] = dict(self.slow.most_common(20))  # type: ignore[assignment]
        return out


def _label(handle: asyncio.events.Handle) -> str:
    callback = handle._callback
    task = getattr(callback, "__self__", None)
    if not isinstance(task, asyncio.Task):
        return getattr(callback, "__qualname__", type(callback).__name__)
    coro = task.get_coro()
    frame = getattr(coro, "cr_frame", None)
    owner = frame.f_locals.get("self") if frame is not None else None
    scope = getattr(owner, "scope", None)
    if isinstance(scope, dict) and "path" in scope:
        return f"{scope.get('method', '')} {re.sub(r'[0-9]+', 'N', scope['path'])}"
    name = task.get_name()
    return name if not name.startswith("Task-") else getattr(coro, "__qualname__", "task")


def _suspended(handle: asyncio.events.Handle) -> str:
    """Where a task's step starts or ended: the innermost await its coroutine is suspended at."""
    task = getattr(handle._callback, "__self__", None)
    if not isinstance(task, asyncio.Task):
        return "-"
    coro: Any = task.get_coro()
    where = "done"
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        frame = coro.cr_frame
        where = f"{_short(frame.f_code.co_filename)}:{frame.f_lineno} {frame.f_code.co_name}"
        coro = getattr(coro, "cr_await", None)
    return where


class Statements:
    """Every SQL statement run through SQLAlchemy on the loop's thread: wall time by its first words."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.thread: int | None = None

    def install(self) -> None:
        event.listen(Engine, "before_cursor_execute", self.before)
        event.listen(Engine, "after_cursor_execute", self.after)

    def before(self, _conn: Any, _cursor: Any, _sql: str, *_args: Any) -> None:
        _conn.info["bench_started"] = time.perf_counter()

    def after(self, conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        took = (time.perf_counter() - conn.info.pop("bench_started", time.perf_counter())) * 1000
        self.times.setdefault(" ".join(sql.split())[:90], []).append(took)

    def report(self) -> dict[str, Any]:
        out = {sql: [len(t), round(sum(t), 1), round(max(t), 2)] for sql, t in self.times.items()}
        return dict(sorted(out.items(), key=lambda item: -item[1][1])[:15])


class Sampler:
    """The loop thread's stack, sampled every millisecond on a thread of its own: functions by inclusive samples."""

    def __init__(self, thread: int) -> None:
        self.thread, self.running, self.samples = thread, True, 0
        self.seen: Counter[str] = Counter()
        self.interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0005)
        self.worker = threading.Thread(target=self.run, daemon=True)
        self.worker.start()

    def run(self) -> None:
        while self.running:
            time.sleep(0.001)
            frame = sys._current_frames().get(self.thread)
            if frame is None or frame.f_code.co_name == "select":
                continue
            self.samples += 1
            names = set()
            while frame is not None:
                names.add(f"{_short(frame.f_code.co_filename)}:{frame.f_code.co_name}")
                frame = frame.f_back
            self.seen.update(names)

    def stop(self) -> str:
        self.running = False
        self.worker.join()
        sys.setswitchinterval(self.interval)
        lines = [f"{self.samples} samples of a busy loop thread"]
        lines += [f"{n:6d} {n / max(1, self.samples):6.1%} {name}" for name, n in self.seen.most_common(90)]
        return "\n".join(lines)


def _short(filename: str) -> str:
    return "/".join(filename.rsplit("/", 2)[-2:])


def create_app() -> Service:
    app = create_service()
    probe = Probe()
    gc.callbacks.append(probe.on_gc)
    Callbacks().install(probe)  # used by asyncio's loop only (``UVICORN_LOOP=asyncio``)
    threading.Thread(target=probe.watch, name="bench-probe-watchdog", daemon=True).start()
    router = APIRouter()
    ticking: list[asyncio.Task[None]] = []

    @router.get(PROBE_PATH)
    async def bench_probe(reset: bool = False, full: bool = False) -> dict[str, Any]:
        """What the loop and the collector did since the last reset (the first call starts the lag probe)."""
        if not ticking:
            ticking.append(asyncio.create_task(probe.ticking()))
        report = probe.report()
        if full:  # what one full pass over this heap costs, and what it walks
            kinds = Counter(type(o).__name__ for o in gc.get_objects())
            wall, cpu = time.perf_counter(), time.thread_time()
            gc.collect()
            report["full pass"] = {
                "wall_ms": round((time.perf_counter() - wall) * 1000, 1),
                "cpu_ms": round((time.thread_time() - cpu) * 1000, 1),
                "tracked by type": kinds.most_common(15),
            }
        if reset:
            probe.reset()
        return report

    profiles: list[cProfile.Profile] = []
    sampling: list[Sampler] = []

    @router.get(SAMPLE_PATH)
    async def bench_sample(stop: bool = False) -> PlainTextResponse:
        """Start sampling the loop thread's stack every millisecond (``stop``: stop, and the functions seen most,
        inclusive)."""
        if not stop:
            sampling.append(Sampler(threading.get_ident()))
            return PlainTextResponse("started")
        return PlainTextResponse(sampling.pop().stop())

    @router.get(PROFILE_PATH)
    async def bench_profile(stop: bool = False, sort: str = "cumulative") -> PlainTextResponse:
        """Start profiling the loop's thread (``stop``: stop, and the profile's top functions)."""
        if not stop:
            profiles.append(cProfile.Profile())
            profiles[-1].enable()
            return PlainTextResponse("started")
        profile = profiles.pop()
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(sort).print_stats(70)
        return PlainTextResponse(out.getvalue())

    route_table.add_routes(app, router)
    app.index_routes()
    return app
