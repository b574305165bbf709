"""Appointment requests through the integration API (``POST /integration/v1/appointment-requests`` with an
``Idempotency-Key`` each), at 1, 10 and 50 requests in flight, against the unchanged poll of the doctor's list at
the same concurrency, measured in the same run (rounds interleaved: baseline, requests, for each concurrency). The
baseline polls the list of a doctor the requests do not go to, so it stays an unchanged poll.

A real server under uvicorn on loopback (``bench.common.Server``), seeded with the demo clinic; the requests spread
over the free times of the next four weeks of two doctors. SQLite always; PostgreSQL too when
``DOCTORDESK_BENCH_POSTGRES_URL`` names a server database to connect through: the benchmark creates a database of
its own there and drops it afterwards. The load generator is Python (httpx) in this process: on 2 cores it shares
the machine with the server, so the absolute rates are lower bounds.

    python -m bench requests            (or: make bench BENCH=requests)
Targets (SQLite): p50 ≤ 5 ms at 1 in flight; ≥ 500 requests/s at 10 in flight.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from contextlib import ExitStack
from datetime import date, timedelta
from typing import Any

import httpx

from bench.common import Round, Server, in_flight_rounds, machine, own_postgres_databases, percentile, table

LEVELS = (1, 10, 50)
PER_LEVEL = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "600"))
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
                free = await http.get(
                    "/integration/v1/free-times",
                    headers=api,
                    params={"doctor": d["id"], "location": loc["id"], "from": first.isoformat(),
                            "to": (first + timedelta(days=27)).isoformat()},
                )  # fmt: skip
                for slot in free.json().get("free", []):
                    bodies.append({"doctor": d["id"], "location": loc["id"], "start": slot["start"]})
        bodies = [
            {**b, "patient": patient_ids[i % len(patient_ids)], "service": "consultation", "note": "bench"}
            for i, b in enumerate(bodies)
        ]
        return api, doctor, bodies


async def _measure(base: str, database: str) -> list[Round]:
    api, doctor, bodies = await _setup(base)
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    rounds: list[Round] = []
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as http:
        poll_headers = dict(doctor)

        async def poll(_i: int) -> httpx.Response:
            return await http.patch("/profile/appointments", headers=poll_headers)

        async def fresh_state() -> None:
            page = (await http.put("/profile/appointments", headers=doctor)).json()
            poll_headers["X-Screen-State"] = page["state"]

        sent = 0

        async def create(i: int) -> httpx.Response:
            body = bodies[(sent + i) % len(bodies)]
            headers = {**api, "Idempotency-Key": uuid.uuid4().hex}
            return await http.post("/integration/v1/appointment-requests", headers=headers, json=body)

        await fresh_state()
        for _ in range(30):  # warm-up: both paths, caches filled
            await poll(0)
            await create(0)
        for in_flight in LEVELS:
            await fresh_state()
            latencies, seconds, errors = await in_flight_rounds(PER_LEVEL, in_flight, poll)
            rounds.append(Round(database, "unchanged poll (baseline)", in_flight, latencies, seconds, errors))
            latencies, seconds, errors = await in_flight_rounds(PER_LEVEL, in_flight, create)
            sent += PER_LEVEL
            rounds.append(Round(database, "create request", in_flight, latencies, seconds, errors))
    return rounds


def main() -> int:
    rounds: list[Round] = []
    with Server() as server:
        rounds += asyncio.run(_measure(server.url, "SQLite"))
    pg = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL")
    if pg:
        with ExitStack() as stack:
            (url,) = stack.enter_context(own_postgres_databases(pg, [BENCH_DB]))
            server = stack.enter_context(Server(env={"DOCTORDESK_DATABASE_URL": url}))
            rounds += asyncio.run(_measure(server.url, "PostgreSQL"))
    headers = ["database", "what", "in flight", "requests", "p50 ms", "p99 ms", "max ms", "requests/s", "errors"]
    print(table(headers, [r.row() for r in rounds]))
    print()
    ratios = []
    for database in dict.fromkeys(r.database for r in rounds):
        for in_flight in LEVELS:
            base, req = (
                next(r for r in rounds if r.database == database and r.in_flight == in_flight and r.what == what)
                for what in ("unchanged poll (baseline)", "create request")
            )
            ratios.append([
                database, in_flight,
                percentile(req.latencies, 50) / max(percentile(base.latencies, 50), 1e-9),
                (len(req.latencies) / req.seconds) / max(len(base.latencies) / base.seconds, 1e-9),
            ])  # fmt: skip
    print(table(["database", "in flight", "p50 ratio (request / poll)", "throughput ratio"], ratios))
    print(f"\n{machine()}")
    sqlite = [r for r in rounds if r.database == "SQLite" and r.what == "create request"]
    p50_one = percentile(sqlite[0].latencies, 50)
    rps_ten = len(sqlite[1].latencies) / sqlite[1].seconds
    errors = sum(r.errors for r in rounds)
    print(f"SQLite: p50 at 1 in flight {p50_one:.1f} ms (target ≤ 5), {rps_ten:.0f} requests/s at 10 (target ≥ 500)")
    return 0 if errors == 0 and p50_one <= 5 and rps_ten >= 500 else 1
