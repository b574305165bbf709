"""Appointment requests through the integration API (``POST /integration/v1/appointment-requests`` with an
``Idempotency-Key`` each), at 1, 10 and 50 requests in flight, against the unchanged poll of the doctor's list at
the same concurrency, measured in the same run (rounds interleaved: baseline, requests, for each concurrency). The
baseline polls the list of a doctor the requests do not go to, so it stays an unchanged poll.

A real server under uvicorn on loopback (``bench.common.Server``), seeded with the demo clinic; the requests spread
over the free times of the next 24 weeks of two doctors, each time requested once. SQLite always; PostgreSQL too
when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server database to connect through: the benchmark creates a database
of its own there and drops it afterwards. The load generator is ``wrk`` (a Lua script gives every request its own
body and ``Idempotency-Key``), which costs the shared 2 cores far less than a Python client would; without wrk,
the Python generator of ``bench.common`` (client-bound: its rates are lower bounds).

    python -m bench requests            (or: make bench BENCH=requests)
Targets (SQLite): p50 ≤ 5 ms at 1 in flight; ≥ 500 requests/s at 10 in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import httpx

from bench.common import Load, Server, load, machine, own_postgres_databases, table

LEVELS = (1, 10, 50)
SECONDS = float(os.environ.get("DOCTORDESK_BENCH_SECONDS", "2"))  # per case and concurrency
WEEKS = 24  # of free times the requests spread over (each is requested once)
BENCH_DB = "doctordesk_bench_requests"


async def _setup(base: str) -> tuple[dict[str, str], dict[str, str], list[dict[str, Any]]]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        token = (await http.post("/auth/login", data={"username": "admin", "password": "demo"})).json()
        admin = {"Authorization": f"Bearer {token['access_token']}"}
        account = (await http.post("/admin/service-accounts", headers=admin, json={"name": "bench"})).json()
        scopes = {"scopes": ["appointments:read", "appointments:write"]}
        key = (await http.post(f"/admin/service-accounts/{account['id']}/keys", headers=admin, json=scopes)).json()
        api = {"Authorization": f"Bearer {key['key']}"}
        # The baseline polls a doctor the requests do not go to (they go to the first two): an unchanged poll.
        doctor_token = (await http.post("/auth/login", data={"username": "doctor3", "password": "demo"})).json()
        doctor = {"Authorization": f"Bearer {doctor_token['access_token']}", "X-Client-Id": "bench-doctor"}
        patients = (await http.get("/admin/users?role=patient", headers=admin)).json()["users"]
        patient_ids = [u["patient_id"] for u in patients if u["patient_id"]]
        doctors = (await http.get("/admin/users?role=doctor", headers=admin)).json()["users"]
        locations = (await http.get("/admin/locations", headers=admin)).json()["locations"]
        bodies: list[dict[str, Any]] = []
        first = date.today() + timedelta(days=1)
        for d in doctors[:2]:
            for loc in locations:
                for window in range(WEEKS // 4):
                    start = first + timedelta(weeks=4 * window)
                    free = await http.get(
                        "/integration/v1/free-times",
                        headers=api,
                        params={"doctor": d["id"], "location": loc["id"], "from": start.isoformat(),
                                "to": (start + timedelta(days=27)).isoformat()},
                    )  # fmt: skip
                    for slot in free.json().get("free", []):
                        bodies.append({"doctor": d["id"], "location": loc["id"], "start": slot["start"]})
        bodies = [
            {**b, "patient": patient_ids[i % len(patient_ids)], "service": "consultation", "note": "bench"}
            for i, b in enumerate(bodies)
        ]
        return api, doctor, bodies


def _measure(base: str, database: str) -> list[Round]:
    """Rounds interleaved per concurrency: the unchanged poll, then the create requests, each for ``SECONDS``."""
    api, doctor, bodies = asyncio.run(_setup(base))
    texts = [json.dumps(b) for b in bodies]
    poll_url, create_url = f"{base}/profile/appointments", f"{base}/integration/v1/appointment-requests"
    create_headers = {**api, "Content-Type": "application/json"}
    state = httpx.put(poll_url, headers=doctor, timeout=30).json()["state"]
    poll_headers = {**doctor, "X-Screen-State": state}
    used = 0

    def create(connections: int, seconds: float) -> Load:
        nonlocal used
        result = load(
            create_url, method="POST", headers=create_headers, connections=connections, seconds=seconds,
            bodies=texts[used:], unique="Idempotency-Key",
        )  # fmt: skip
        used += result.requests + connections  # wrk may have sent a few more than it counted
        if used > len(texts):
            raise RuntimeError(f"{len(texts)} free times were not enough: shorten DOCTORDESK_BENCH_SECONDS")
        return result

    load(poll_url, method="PATCH", headers=poll_headers, connections=4, seconds=1)  # warm-up: both paths
    create(4, 0.5)
    rounds: list[Round] = []
    for in_flight in LEVELS:
        polled = load(poll_url, method="PATCH", headers=poll_headers, connections=in_flight, seconds=SECONDS)
        rounds.append(Round(database, "unchanged poll (baseline)", in_flight, polled))
        rounds.append(Round(database, "create request", in_flight, create(in_flight, SECONDS)))
    return rounds


@dataclass
class Round:
    database: str
    what: str
    in_flight: int
    load: Load

    def row(self) -> list[Any]:
        m = self.load
        return [self.database, self.what, self.in_flight, m.requests, m.p50_ms, m.p99_ms, round(m.rps), m.errors,
                m.tool]  # fmt: skip


def main() -> int:
    rounds: list[Round] = []
    with Server() as server:
        rounds += _measure(server.url, "SQLite")
    pg = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL")
    if pg:
        with ExitStack() as stack:
            (url,) = stack.enter_context(own_postgres_databases(pg, [BENCH_DB]))
            server = stack.enter_context(Server(env={"DOCTORDESK_DATABASE_URL": url}))
            rounds += _measure(server.url, "PostgreSQL")
    headers = ["database", "what", "in flight", "requests", "p50 ms", "p99 ms", "requests/s", "errors", "load"]
    print(table(headers, [r.row() for r in rounds]))
    print()
    ratios = []
    for database in dict.fromkeys(r.database for r in rounds):
        for in_flight in LEVELS:
            base, req = (
                next(r for r in rounds if r.database == database and r.in_flight == in_flight and r.what == what)
                for what in ("unchanged poll (baseline)", "create request")
            )
            p50_ratio = req.load.p50_ms / max(base.load.p50_ms, 1e-9)
            ratios.append([database, in_flight, p50_ratio, req.load.rps / max(base.load.rps, 1e-9)])
    print(table(["database", "in flight", "p50 ratio (request / poll)", "throughput ratio"], ratios))
    print(f"\n{machine()}")
    sqlite = [r for r in rounds if r.database == "SQLite" and r.what == "create request"]
    p50_one = sqlite[0].load.p50_ms
    rps_ten = sqlite[1].load.rps
    errors = sum(r.load.errors for r in rounds)
    print(f"SQLite: p50 at 1 in flight {p50_one:.1f} ms (target ≤ 5), {rps_ten:.0f} requests/s at 10 (target ≥ 500)")
    return 0 if errors == 0 and p50_one <= 5 and rps_ten >= 500 else 1
