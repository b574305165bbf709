"""Finding the route of a request: the same small cost for every path, a 404 included.

Part one times the top-level routing walk of the bench app (``bench/app.py``: the service plus a bare endpoint) for
paths near the front and at the end of the route table and for unknown paths, in microseconds per request, and
gives each as a ratio to the cheapest. Target: the most expensive within ``TARGET_SPREAD_US`` of the cheapest.

Part two drives the bare ``PATCH /api/bench-bare`` of the service and of the separate minimal app
(``bench/bare_app.py``) with ``load`` at 50 connections, rounds interleaved: the in-service endpoint pays the
service's routing and middleware, the separate app neither.
"""

from __future__ import annotations

import os
import time
from typing import Any

from starlette.routing import Match

from bench.app import BARE_PATH
from bench.app import create_app as create_bench_app
from bench.common import Load, Server, load, machine, table

TARGET_SPREAD_US = 5.0
LOOKUPS = int(os.environ.get("BENCH_ROUTING_LOOKUPS", "20000"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "9"))  # per app, split into ROUNDS runs
ROUNDS = 3

CASES = (
    ("GET", "/healthz"),
    ("PATCH", "/profile/appointments"),
    ("PATCH", "/profile/appointments/7/approve/change"),
    ("POST", "/integration/v1/appointment-requests"),
    ("POST", "/profile/messages/send-message"),
    ("GET", "/fhir/Appointment/12"),
    ("PUT", "/profile/language"),
    ("GET", "/js/main.js"),
    ("PATCH", BARE_PATH),
    ("GET", "/profile/no-such-screen"),
    ("GET", "/api/no/such/thing"),
)


def _scope(method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": [], "query_string": b""}


def lookup_us(app: Any, method: str, path: str) -> tuple[float, str]:
    """Microseconds per walk of the app's top-level routes for one request (best of 5), and what it found."""
    routes = app.router.routes
    scope = _scope(method, path)
    found = "none"
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(LOOKUPS):
            for route in routes:
                match, _ = route.matches(scope)
                if match == Match.FULL:
                    break
        best = min(best, (time.perf_counter() - started) / LOOKUPS * 1e6)
    for route in routes:
        match, child = route.matches(scope)
        if match != Match.NONE:
            chosen = child.get("route") or child.get("endpoint")
            found = f"{match.name} {getattr(chosen, 'path', None) or type(chosen).__name__}"
            if match == Match.FULL:
                break
    return best, found


def lookups() -> bool:
    app = create_bench_app()
    results = [(method, path, *lookup_us(app, method, path)) for method, path in CASES]
    cheapest = min(us for _, _, us, _ in results)
    rows = [(f"{m} {p}", us, f"{us / cheapest:.1f}", found) for m, p, us, found in results]
    print(f"\nFinding the route ({LOOKUPS:,} lookups each, best of 5) on {machine()}\n")
    print(table(("request", "µs per lookup", "× cheapest", "found"), rows))
    spread = max(us for _, _, us, _ in results) - cheapest
    met = spread <= TARGET_SPREAD_US
    print(f"\nSpread {spread:.1f} µs (target ≤ {TARGET_SPREAD_US} µs): {'met' if met else 'MISSED'}")
    return met


def bare_endpoints() -> None:
    connections = 50
    with Server(app="bench.app:create_app") as server, Server(app="bench.bare_app:create_app") as bare:
        cases = {
            "separate bare app": f"{bare.url}{BARE_PATH}",
            "in-service bare endpoint": f"{server.url}{BARE_PATH}",
        }
        for url in cases.values():  # warm-up
            load(url, method="PATCH", connections=connections, seconds=1)
        runs: dict[str, list[Load]] = {name: [] for name in cases}
        for _ in range(ROUNDS):
            for name, url in cases.items():
                runs[name].append(load(url, method="PATCH", connections=connections, seconds=SECONDS / ROUNDS))
    medians = {name: sorted(rs, key=lambda r: r.rps)[ROUNDS // 2] for name, rs in runs.items()}
    floor = medians["separate bare app"]
    rows = [
        (name, round(m.rps), m.p50_ms, m.p99_ms, f"{m.rps / floor.rps:.0%}", sum(r.errors for r in runs[name]), m.tool)
        for name, m in medians.items()
    ]
    print(f"\nPATCH {BARE_PATH} at {connections} connections, median of {ROUNDS} interleaved rounds\n")
    print(table(("app", "req/s", "p50 ms", "p99 ms", "of separate app", "errors", "tool"), rows))


def main() -> int:
    met = lookups()
    bare_endpoints()
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
