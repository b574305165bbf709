"""Chat sends with 1, 10 and 50 in flight, against a bare endpoint at the same concurrency, measured in the same run
(rounds interleaved: bare, sends, for each concurrency).

Each send comes from its own signed-in client (doctors and support agents, each login its own token and client
id) with the chat of its own appointment open, as the web app sends: ``POST /profile/messages/send-message`` with
the open chat's state token, which the answer's update set replaces. A real server under uvicorn on loopback
(``bench.common.Server`` with the bench app, whose ``PATCH /api/bench-bare`` answers ``{}`` behind the same
middleware), seeded with the demo clinic. SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL``
names a server to create a database of its own on. The load generator is Python (httpx) in this process, sharing
the 2 cores with the server: absolute rates are lower bounds, the ratios are the robust part.

    python -m bench chat_send            (or: make bench BENCH=chat_send)
Targets: p99 at 10 in flight ≤ 4 × p99 at 1 in flight; ≥ 200 messages/s at 10 in flight on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from bench.app import BARE_PATH
from bench.common import ROUND_COLUMNS, Round, Server, database_label, in_flight_rounds, machine, percentile, table

LEVELS = (1, 10, 50)
PER_LEVEL = int(os.environ.get("DOCTORDESK_BENCH_SENDS", "500"))
SENDERS = max(LEVELS)
USERS = ("doctor1", "doctor2", "doctor3", "support1", "support2")
ENV = {"DOCTORDESK_CHAT_SEND_PER_MINUTE": "0", "DOCTORDESK_LOGIN_MAX_FAILURES": "1000"}


@dataclass
class Sender:
    """One signed-in client with one appointment's chat open."""

    headers: dict[str, str]
    appointment: int
    state: str


class OpenChat(Protocol):
    """A client with one appointment's chat open: its headers and the state token its last answer carried."""

    headers: dict[str, str]
    appointment: int
    state: str


async def send_carrying_state(http: httpx.AsyncClient, free: asyncio.Queue[Any], i: int) -> httpx.Response:
    """Message ``i`` from the next free client of ``free`` (each an ``OpenChat``): a client sends one message at a
    time, with its last answer's token, and keeps the token of this answer, as a real client does."""
    sender: OpenChat = await free.get()
    try:
        answer = await http.post(
            "/profile/messages/send-message",
            data={"content": f"Message {i}", "appointment-id": str(sender.appointment)},
            headers={**sender.headers, "X-Screen-State": sender.state},
        )
        if answer.status_code == 200:
            sender.state = answer.json().get("state") or sender.state
        return answer
    finally:
        free.put_nowait(sender)


async def _appointments(http: httpx.AsyncClient, headers: dict[str, str]) -> list[int]:
    answer = await http.get("/api/appointments", headers=headers, params={"limit": 200})
    return [a["id"] for a in answer.json()["appointments"]]


async def _senders(http: httpx.AsyncClient) -> list[Sender]:
    """``SENDERS`` clients, spread over the demo's doctors and agents and over the appointments each may chat on."""
    senders: list[Sender] = []
    n = 0
    while len(senders) < SENDERS:
        user = USERS[n % len(USERS)]
        token = (await http.post("/auth/login", data={"username": user, "password": "demo"})).json()
        headers = {"Authorization": f"Bearer {token['access_token']}", "X-Client-Id": f"bench-{n}"}
        ids = await _appointments(http, headers)
        for offset in range(len(ids)):
            appointment = ids[(n + offset) % len(ids)]
            page = await http.put(f"/profile/messages/user-chat?appointment-id={appointment}", headers=headers)
            if page.status_code != 200:
                continue
            first = await http.post(  # the chat opens read-only where chat is off: only a send tells
                "/profile/messages/send-message",
                data={"content": "Hello", "appointment-id": str(appointment)},
                headers={**headers, "X-Screen-State": page.json()["state"]},
            )
            if first.status_code == 200:
                senders.append(Sender(headers, appointment, first.json()["state"]))
                break
        n += 1
        if n > SENDERS * 4:
            raise RuntimeError("no appointment of the demo clinic accepts chat")
    return senders


async def _measure(base: str, database: str) -> list[Round]:
    limits = httpx.Limits(max_connections=SENDERS + 8, max_keepalive_connections=SENDERS + 8)
    rounds: list[Round] = []
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        free: asyncio.Queue[Sender] = asyncio.Queue()
        for sender in await _senders(http):
            free.put_nowait(sender)

        async def send(i: int) -> httpx.Response:
            return await send_carrying_state(http, free, i)

        async def bare(_i: int) -> httpx.Response:
            return await http.patch(BARE_PATH)

        for i in range(30):  # warm-up: both paths
            await bare(i)
            await send(i)
        for in_flight in LEVELS:
            latencies, seconds, errors = await in_flight_rounds(PER_LEVEL, in_flight, bare)
            rounds.append(Round(database, "bare endpoint (baseline)", in_flight, latencies, seconds, errors))
            latencies, seconds, errors = await in_flight_rounds(PER_LEVEL, in_flight, send)
            rounds.append(Round(database, "chat send", in_flight, latencies, seconds, errors))
    return rounds


def _verdicts(rounds: list[Round]) -> tuple[list[list[Any]], bool]:
    rows: list[list[Any]] = []
    ok = True
    for database in dict.fromkeys(r.database for r in rounds):
        sends = {r.in_flight: r for r in rounds if r.database == database and r.what == "chat send"}
        tail = percentile(sends[10].latencies, 99) / max(percentile(sends[1].latencies, 99), 1e-9)
        rate = len(sends[10].latencies) / sends[10].seconds
        met = tail <= 4 and (database != "PostgreSQL" or rate >= 200)
        ok = ok and met and all(r.errors == 0 for r in rounds)
        rows.append([database, f"{tail:.2f}", f"{rate:,.0f}", "met" if met else "MISSED"])
    return rows, ok


def main() -> int:
    rounds: list[Round] = []
    with Server(app="bench.app:create_app", env=ENV) as server:
        rounds += asyncio.run(_measure(server.url, "SQLite"))
    if database_label() == "PostgreSQL":
        with Server(app="bench.app:create_app", env=ENV, postgres=True) as server:
            rounds += asyncio.run(_measure(server.url, "PostgreSQL"))
    print(f"\nChat sends at 1, 10 and 50 in flight ({machine()})")
    print(table(ROUND_COLUMNS, [r.row() for r in rounds]))
    rows, ok = _verdicts(rounds)
    print()
    print(table(["database", "p99 at 10 / p99 at 1 (≤ 4)", "messages/s at 10 (≥ 200 on PostgreSQL)", "target"], rows))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
