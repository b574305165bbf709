"""The client SDK keeping a chat screen in sync: how long from a support agent's send until the doctor's SDK screen
shows the message (over the real-time stream: the chat's poll interval is set to 60 s, so nothing else brings it),
and what applying an update set costs the SDK on a long thread.

A real server (uvicorn on loopback, SQLite, the demo clinic) in a subprocess. Baselines, measured in the same run:
the agent's send POST alone (the delivery includes it), and an unchanged poll PATCH sent with plain httpx (the
floor of any round trip to this server).

    python -m bench.bench_sdk            (or: make bench)
Target: what the sync adds after the send (the stream hop, the PATCH it triggers and applying the answer) ≤ 50 ms
at p50: delivery p50 − send p50.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import Percentiles, table
from doctordesk.client import Client, Screen
from doctordesk.screens.protocol import apply, p_append

ROUNDS = int(os.environ.get("DOCTORDESK_BENCH_SDK_ROUNDS", "100"))
WARMUP = 10
ENV = {
    "DOCTORDESK_POLL_CHAT_SECONDS": "60",
    "DOCTORDESK_CHAT_SEND_PER_MINUTE": "100000",
    "DOCTORDESK_HEARTBEAT_SECONDS": "5",
}


@dataclass
class Result(Percentiles):
    label: str
    latencies_ms: list[float]


async def _login(http: httpx.AsyncClient, username: str) -> dict[str, str]:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    response.raise_for_status()
    return {"Authorization": f"Bearer {response.json()['access_token']}", "X-Client-Id": f"bench-{username}"}


def _has(screen: Screen, text: str) -> bool:
    return any(e.get("value") == text for e in screen.walk() if e["id"].startswith("incoming-"))


async def _measure(url: str) -> list[Result]:
    async with Client(url) as doctor, httpx.AsyncClient(base_url=url, timeout=10) as http:
        await doctor.login("doctor1", "demo")
        listing = await doctor.request("GET", "/api/appointments")
        appointment_id = next(a["id"] for a in listing["appointments"] if a["chat_enabled"])
        screen = await doctor.open(f"/profile/messages/user-chat?appointment-id={appointment_id}")
        assert doctor.stream is not None
        await doctor.stream.wait_connected(10)
        agent = await _login(http, "support1")
        page = (await http.put(f"/profile/messages/user-chat?appointment-id={appointment_id}", headers=agent)).json()
        agent_state = {**agent, "X-Screen-State": page["state"]}

        poll: list[float] = []
        for i in range(WARMUP + ROUNDS):
            started = time.perf_counter()
            response = await http.patch("/profile/messages/load-more", headers=agent_state)
            elapsed = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            if i >= WARMUP:
                poll.append(elapsed)

        send: list[float] = []
        delivery: list[float] = []
        for i in range(WARMUP + ROUNDS):
            text = f"bench message {i}"
            arrived = asyncio.Event()
            unsubscribe = screen.on_change(lambda _c, t=text, e=arrived: e.set() if _has(screen, t) else None)
            started = time.perf_counter()
            response = await http.post(
                "/profile/messages/send-message",
                data={"appointment-id": str(appointment_id), "content": text},
                headers=agent,
            )
            sent = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            await asyncio.wait_for(arrived.wait(), 5)
            delivered = (time.perf_counter() - started) * 1000
            unsubscribe()
            if i >= WARMUP:
                send.append(sent)
                delivery.append(delivered)
    return [
        Result("baseline: unchanged poll PATCH (plain httpx)", poll),
        Result("baseline: agent's send POST alone", send),
        Result("send → doctor's SDK screen shows it (stream)", delivery),
    ]


def _apply_cost(messages: int) -> Result:
    """Applying a one-message append to a chat page holding ``messages`` messages (the SDK copies the tree)."""
    tree = [
        {
            "id": "scroll",
            "ref": "scroll",
            "type": "Spacer",
            "children": [
                {"id": f"incoming-{i}", "ref": f"incoming-{i}", "type": "Group", "value": f"message {i}" * 5}
                for i in range(messages)
            ],
        }
    ]
    patch = p_append([{"id": "incoming-new", "ref": "incoming-new", "type": "Group", "value": "new"}], parent="scroll")
    latencies = []
    for _ in range(200):
        started = time.perf_counter()
        apply(tree, [patch])
        latencies.append((time.perf_counter() - started) * 1000)
    return Result(f"apply one appended message to {messages} messages (in process)", latencies)


def _table(results: list[Result]) -> str:
    return table(["case", "n", "p50 ms", "p99 ms"], [(r.label, len(r.latencies_ms), r.p50, r.p99) for r in results])


def main() -> int:
    """Run the benchmark and print the table; exit status 1 when a target is missed."""
    from tests.support.live import LiveServer  # the same loopback server the end-to-end tests use

    with tempfile.TemporaryDirectory(prefix="bench-sdk-") as tmp:
        server = LiveServer(Path(tmp), extra_env=dict(ENV))
        server.prepare()
        server.start()
        try:
            results = asyncio.run(_measure(server.url))
        finally:
            server.stop()
    results += [_apply_cost(30), _apply_cost(300)]
    print("Client SDK: keeping a chat screen in sync")
    print(_table(results))
    _, send, delivery = results[:3]
    added = delivery.p50 - send.p50
    ok = added <= 50
    print(f"delivery p50 − send p50 = {added:.2f} ms (target ≤ 50): {'met' if ok else 'MISSED'}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
