"""``doctordesk serve --workers 2`` against one worker, in the same run, on PostgreSQL without Redis (the workers
share the Unix-socket bus of ``serve``): unchanged polls per second and chat sends per second at 1, 10 and 50 in
flight, and what each request cost the servers in CPU.

Rounds are interleaved (at each level: one worker, then two) and run twice, in two placements:

- ``shared``: nothing pinned; the load generator and the servers share the machine's cores, as in production on
  one host.
- ``pinned``: the load generator (this process and its wrk) on CPU 0, every thread of the servers on the others
  (``sched_setaffinity``, as ``taskset``). On 2 cores this gives both servers one core: two workers cannot be
  faster there, but a CPU per request that stays the same shows they add no work of their own.

Each round reports the servers' CPU (user + system of every server process from /proc, over the round) per
request and PostgreSQL's (its backends serving the server's database), each worker's part of the servers' CPU and
of the requests (each worker's /metrics, read before and after the round on a connection held to it), the
connections each worker held, the supervisor's part (it runs the bus's broker), the chat sends answered by
rendering the chat again instead of appending to the sender's page (the page was in the other worker's page
cache), the events the workers handled and those a worker only marked (another worker's, which none of its
streams, caches or tasks listens for: docs/realtime.md#scale-out), the server processes' context switches per
request (each time a request's work stopped for a socket and resumed), and the load generator's CPU (this process
and its wrk). Two workers scale when the CPU per request stays
that of one worker and each worker takes about half; the throughput then needs cores: the last table gives the
cores the target rate needs at the CPU per request two workers measured.

Unchanged polls come from ``CLIENTS`` distinct signed-in clients (a token and client id each) whose list page was
opened through whichever worker took the connection (wrk, one thread). Chat sends come from 50 clients, each with
a chat open, one message at a time, each carrying its answer's state token to the next send as the web app does
(httpx in this process). Each case (placement and level) opens chats on both servers, fresh ones while the demo
clinic has them and then the same ones again in the same order (both databases are seeded alike), and sends the
same number of messages (``DOCTORDESK_BENCH_SENDS``) to each, so both servers see the same work.

    python -m bench workers            (needs DOCTORDESK_BENCH_POSTGRES_URL; SQLite otherwise)
    DOCTORDESK_BENCH_PROFILE=<dir> [DOCTORDESK_BENCH_PYSPY=<py-spy>]: py-spy profiles of extra rounds, not counted
Targets: two workers ≥ 1.6 × one worker's unchanged polls/s and ≥ 1.5 × its chat sends/s (``shared``,
10 and 50 in flight).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.bench_chat_send import send_carrying_state
from bench.common import (
    database_label,
    in_flight_rounds,
    load,
    machine,
    percentile,
    table,
)
from bench.procs import client_cpu_seconds, connections, family, named, pin, switches
from bench.workers_served import Served, served

LEVELS = (1, 10, 50)
SECONDS = float(os.environ.get("DOCTORDESK_BENCH_SECONDS", "4"))
SENDS = int(os.environ.get("DOCTORDESK_BENCH_SENDS", "400"))  # per round
CLIENTS = 100
SENDERS = max(LEVELS)
USERS = ("doctor1", "doctor2", "doctor3", "support1", "support2")
ALL_CPUS = set(range(os.cpu_count() or 1))
# A directory: each worker (and the supervisor) profiled with py-spy in extra rounds at 10 in flight, shared placement.
PROFILE = os.environ.get("DOCTORDESK_BENCH_PROFILE", "")
PYSPY = os.environ.get("DOCTORDESK_BENCH_PYSPY", "py-spy")
PLACEMENTS: dict[str, tuple[set[int], set[int]]] = {  # load generator's CPUs, servers' CPUs
    "shared": (ALL_CPUS, ALL_CPUS),
    "pinned": ({0}, ALL_CPUS - {0} or {0}),
}


# --- what a round measured ----------------------------------------------------------------------------------------


@dataclass
class Measured:
    """One round: the requests answered and what they cost the servers and the load generator in CPU seconds."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cpu: float  # every server process
    worker_cpu: list[float]  # each worker's part of it
    client_cpu: float
    held: list[int]  # the load generator's connections each worker held, half a second into the round
    served_by: list[float]  # the requests each worker answered (its /metrics)
    rendered: int = 0  # chat sends answered with the chat rendered again, not appended to the sender's page
    events: tuple[int, int] = (0, 0)  # the workers' events handled (their own and others' they listen for), marked only
    database_cpu: float = 0.0  # the PostgreSQL backends serving the server's database
    switches: int = 0  # context switches of every server process (workers, supervisor and its broker)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def database_ms(self) -> float:
        """PostgreSQL's CPU per request, in ms."""
        return 1000 * self.database_cpu / self.requests if self.requests else 0.0

    @property
    def switches_per_request(self) -> float:
        return self.switches / self.requests if self.requests else 0.0

    @property
    def cpu_ms(self) -> float:
        """The servers' CPU per request, in ms."""
        return 1000 * self.server_cpu / self.requests if self.requests else 0.0

    @property
    def shares(self) -> str:
        """Each worker's part of the workers' CPU (the busier first), and the rest (the supervisor, which runs the
        bus's broker) as a part of all of it."""
        total = sum(self.worker_cpu) or 1.0
        rest = self.server_cpu - sum(self.worker_cpu)
        parts = "/".join(f"{100 * c / total:.0f}" for c in sorted(self.worker_cpu, reverse=True))
        return f"{parts} (+{100 * rest / (self.server_cpu or 1.0):.0f})"

    @property
    def spread(self) -> str:
        """Each worker's part of the requests (its /metrics, the busier first) and of the connections."""
        total = sum(self.served_by) or 1.0
        parts = "/".join(f"{100 * n / total:.0f}" for n in sorted(self.served_by, reverse=True))
        return f"{parts} ({'/'.join(str(n) for n in sorted(self.held, reverse=True))})"


Outcome = tuple[int, float, float, float, int]  # requests, seconds, p50 ms, p99 ms, errors


def measured(target: Served, run: Callable[[], Outcome]) -> Measured:
    """``run`` against ``target``, with the CPU time of the servers' processes and of the load generator."""
    held: list[int] = []
    count = threading.Timer(0.5, lambda: held.extend(connections(target.tree.workers, target.port)))
    counted = answered(target)
    pids = family(target.tree.root)
    before, client, switched = target.tree.snapshot(), client_cpu_seconds(), switches(pids)
    backends = named(f" {target.database} ") if target.database else {}
    count.start()
    requests, seconds, p50, p99, errors = run()
    after, client, switched = target.tree.snapshot(), client_cpu_seconds() - client, switches(pids) - switched
    backends_after = named(f" {target.database} ") if target.database else {}
    count.join()
    now = answered(target)
    served_by = [n - counted.get(instance, _NONE)[0] for instance, (n, *_) in now.items()]
    rendered, handled, marked = (sum(got[i] - counted.get(instance, _NONE)[i] for instance, got in now.items())
                                 for i in (1, 2, 3))  # fmt: skip
    spent = {pid: after[pid] - before.get(pid, 0.0) for pid in after}
    workers = [spent.get(pid, 0.0) for pid in target.tree.workers]
    got = Measured(requests, seconds, p50, p99, errors, sum(spent.values()), workers, client, held, served_by)
    got.rendered, got.events, got.switches = int(rendered), (int(handled), int(marked)), switched
    got.database_cpu = sum(c - backends.get(pid, 0.0) for pid, c in backends_after.items())
    return got


_COUNTED = re.compile(
    r"^doctordesk_request_seconds_count\{(?P<labels>[^}]*)\} (?P<n>\S+)$"
    r"|^doctordesk_polls_from_memory_total (?P<m>\S+)$"
    r'|^doctordesk_chat_send_answers_total\{how="rendered"\} (?P<r>\S+)$'
    r"|^doctordesk_events_received_total (?P<h>\S+)$"
    r"|^doctordesk_events_marked_only_total (?P<o>\S+)$",
    re.M,
)
Answered = tuple[float, float, float, float]  # requests, sends rendered, events handled, events marked only
_NONE: Answered = (0.0, 0.0, 0.0, 0.0)


def _answered(exposition: str) -> Answered:
    """What a worker answered so far, by its /metrics: the requests (those the request timer saw, its own
    ``/readyz`` aside, and the unchanged polls answered from memory ahead of it), the chat sends whose answer
    was the chat rendered again (the sender's page was not in this worker's page cache), and the events it handled
    and those of the other workers it only marked (none of its streams, caches or tasks listens for them)."""
    total = rendered = handled = marked = 0.0
    for found in _COUNTED.finditer(exposition):
        if found["m"] is not None:
            total += float(found["m"])
        elif found["r"] is not None:
            rendered += float(found["r"])
        elif found["h"] is not None:
            handled += float(found["h"])
        elif found["o"] is not None:
            marked += float(found["o"])
        elif 'route="/readyz"' not in found["labels"]:
            total += float(found["n"])
    return total, rendered, handled, marked


def answered(target: Served) -> dict[str, Answered]:
    """``_answered`` of each worker, by instance: connections are opened (and kept open meanwhile, so the next
    may reach another worker) until every worker answered ``/readyz`` and ``/metrics`` on one."""
    found: dict[str, Answered] = {}
    opened: list[httpx.Client] = []
    deadline = time.monotonic() + 20
    try:
        while len(found) < len(target.tree.workers) and time.monotonic() < deadline:
            client = httpx.Client(base_url=target.base, timeout=5, limits=httpx.Limits(max_connections=1))
            opened.append(client)
            instance = client.get("/readyz").json()["instance"]
            if instance not in found:
                found[instance] = _answered(client.get("/metrics").text)
    finally:
        for client in opened:
            client.close()
    return found


def place(placement: str, targets: dict[int, Served]) -> None:
    generator, servers = PLACEMENTS[placement]
    os.sched_setaffinity(0, generator)  # wrk, started from here, inherits it
    for target in targets.values():
        pin(target.tree.snapshot(), servers)


# --- unchanged polls --------------------------------------------------------------------------------------------


async def _pollers(base: str) -> list[dict[str, str]]:
    """``CLIENTS`` clients' poll headers, each page opened on a connection of its own (any worker)."""
    found: list[dict[str, str]] = []
    for n in range(CLIENTS):
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            login = await http.post("/auth/login", data={"username": USERS[n % len(USERS)], "password": "demo"})
            headers = {"Authorization": f"Bearer {login.json()['access_token']}", "X-Client-Id": f"poll-{n}"}
            page = await http.put("/profile/appointments", headers=headers)
            found.append({**headers, "X-Screen-State": page.json()["state"]})
    return found


def poll_round(target: Served, pollers: list[dict[str, str]], connections: int, seconds: float) -> Measured:
    def run() -> Outcome:
        got = load(f"{target.base}/profile/appointments", method="PATCH", rotate=pollers, connections=connections,
                   seconds=seconds)  # fmt: skip
        return got.requests, got.seconds, got.p50_ms, got.p99_ms, got.errors

    return measured(target, run)


# --- chat sends ---------------------------------------------------------------------------------------------------


@dataclass
class Sender:
    """A signed-in client with one chat open and the state token its last answer carried."""

    user: str
    headers: dict[str, str]
    appointment: int = 0
    state: str = ""


@dataclass
class Chats:
    """A server's senders and, by user, the appointments whose chat no sender has opened yet."""

    senders: list[Sender]
    unused: dict[str, list[int]]
    spent: dict[str, list[int]] = field(default_factory=dict)  # by user, the chats opened so far
    reused: int = 0  # chats opened again for want of fresh ones (reported)


async def _chats(base: str) -> Chats:
    senders: list[Sender] = []
    unused: dict[str, list[int]] = {}
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for n in range(SENDERS):
            user = USERS[n % len(USERS)]
            token = (await http.post("/auth/login", data={"username": user, "password": "demo"})).json()
            headers = {"Authorization": f"Bearer {token['access_token']}", "X-Client-Id": f"send-{n}"}
            senders.append(Sender(user, headers))
            if user not in unused:
                answer = await http.get("/api/appointments", headers=headers, params={"limit": 200})
                unused[user] = [a["id"] for a in answer.json()["appointments"]]
    return Chats(senders, unused)


async def _open(http: httpx.AsyncClient, sender: Sender, appointment: int) -> bool:
    """Open ``appointment``'s chat for ``sender`` and send once (a chat switched off opens read-only)."""
    page = await http.put(f"/profile/messages/user-chat?appointment-id={appointment}", headers=sender.headers)
    if page.status_code != 200:
        return False
    first = await http.post(
        "/profile/messages/send-message",
        data={"content": "Hello", "appointment-id": str(appointment)},
        headers={**sender.headers, "X-Screen-State": page.json()["state"]},
    )
    if first.status_code != 200:
        return False
    sender.appointment, sender.state = appointment, first.json()["state"]
    return True


async def _fresh(base: str, chats: Chats) -> None:
    """Give every sender a chat of its own that no sender opened before (the same ones on both servers: their
    databases are seeded alike); when the demo clinic has no fresh chat left for a user, one of theirs again."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        for sender in chats.senders:
            spent = chats.spent.setdefault(sender.user, [])
            while chats.unused[sender.user]:
                appointment = chats.unused[sender.user].pop(0)
                if await _open(http, sender, appointment):
                    spent.append(appointment)
                    break
            else:
                if not spent or not await _open(http, sender, spent[chats.reused % len(spent)]):
                    raise RuntimeError(f"no chat of the demo clinic accepts messages from {sender.user}")
                chats.reused += 1


async def _send_round(base: str, senders: list[Sender], in_flight: int) -> Outcome:
    limits = httpx.Limits(max_connections=SENDERS + 8, max_keepalive_connections=SENDERS + 8)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        free: asyncio.Queue[Sender] = asyncio.Queue()
        for sender in senders:
            free.put_nowait(sender)

        async def send(i: int) -> httpx.Response:
            return await send_carrying_state(http, free, i)

        latencies, seconds, errors = await in_flight_rounds(SENDS, in_flight, send)
    return len(latencies), seconds, percentile(latencies, 50), percentile(latencies, 99), errors


def send_round(target: Served, chats: Chats, in_flight: int) -> Measured:
    return measured(target, lambda: asyncio.run(_send_round(target.base, chats.senders, in_flight)))


# --- the run ------------------------------------------------------------------------------------------------------

Key = tuple[str, str, int, int]  # placement, what, in flight, workers


def _measure(targets: dict[int, Served]) -> tuple[dict[Key, Measured], int]:
    """Every poll round before every send round: a send changes the lists the pollers' tokens name (wrk repeats
    a poll's headers, so a stale token would make every later poll render)."""
    results: dict[Key, Measured] = {}
    chats = {w: asyncio.run(_chats(t.base)) for w, t in targets.items()}
    for w, t in targets.items():  # warm-up of the send path, before the pollers open their pages
        asyncio.run(_fresh(t.base, chats[w]))
        send_round(t, chats[w], 10)
    pollers = {w: asyncio.run(_pollers(t.base)) for w, t in targets.items()}
    for placement in PLACEMENTS:
        place(placement, targets)
        for w, t in targets.items():
            poll_round(t, pollers[w], 4, 1)
        for level in LEVELS:
            for w, t in targets.items():
                results[(placement, "unchanged poll", level, w)] = poll_round(t, pollers[w], level, SECONDS)
    for w, t in targets.items() if PROFILE else ():
        with profiled(t, "poll"):
            poll_round(t, pollers[w], 10, SECONDS)
    for placement in PLACEMENTS:
        place(placement, targets)
        for level in LEVELS:
            for w, t in targets.items():
                asyncio.run(_fresh(t.base, chats[w]))
                results[(placement, "chat send", level, w)] = send_round(t, chats[w], level)
    place("shared", targets)
    for w, t in targets.items() if PROFILE else ():
        asyncio.run(_fresh(t.base, chats[w]))
        with profiled(t, "send"):
            send_round(t, chats[w], 10)
    return results, max(c.reused for c in chats.values())


@contextmanager
def profiled(target: Served, name: str) -> Iterator[None]:
    """py-spy records each process of ``target`` while the block runs (raw, collapsed stacks, 200 Hz, idle
    excluded, without stopping the process: ``--nonblocking``), into ``PROFILE``/<name>-<workers>w-<pid>.txt."""
    pids = [*target.tree.workers, *([target.tree.root] if target.tree.workers != (target.tree.root,) else [])]
    spies = [
        subprocess.Popen(
            [
                PYSPY,
                "record",
                "--pid",
                str(pid),
                "--format",
                "raw",
                "--rate",
                "200",
                "--nonblocking",
                "--threads",
                "-o",
                str(Path(PROFILE) / f"{name}-{len(target.tree.workers)}w-{pid}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for pid in pids
    ]
    try:
        yield
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)  # py-spy writes what it recorded when interrupted
            spy.wait(30)


def _rows(results: dict[Key, Measured]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for (placement, what, level, workers), got in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        one = results[(placement, what, level, 1)]
        gain = f"{got.rps / one.rps:.2f}" if workers == 2 and one.rps else ""
        cost = f"{got.cpu_ms / one.cpu_ms:.2f}" if workers == 2 and one.cpu_ms else ""
        rows.append(
            [placement, what, level, workers, round(got.rps), gain, got.p50_ms, got.p99_ms, got.errors,
             f"{got.cpu_ms:.3f}", cost, f"{got.switches_per_request:.1f}", f"{got.database_ms:.3f}",
             f"{got.server_cpu / got.seconds:.2f}",
             got.shares, got.spread,
             f"{100 * got.rendered / got.requests:.0f}" if what == "chat send" and got.requests else "",
             "{} / {}".format(*got.events) if what == "chat send" else "",
             f"{got.client_cpu / got.seconds:.2f}"]
        )  # fmt: skip
    return rows


def _needs(results: dict[Key, Measured]) -> tuple[list[list[Any]], bool]:
    """Per target: met or not, and the cores the target rate needs at the CPU per request two workers measured
    (the servers', PostgreSQL's and the load generator's)."""
    rows: list[list[Any]] = []
    ok = True
    for what, factor in (("unchanged poll", 1.6), ("chat send", 1.5)):
        for level in LEVELS[1:]:
            one, two = results[("shared", what, level, 1)], results[("shared", what, level, 2)]
            met = two.rps >= factor * one.rps
            ok = ok and met
            goal = factor * one.rps
            server, database, client = (goal * cpu / max(two.requests, 1) for cpu in
                                        (two.server_cpu, two.database_cpu, two.client_cpu))  # fmt: skip
            rows.append(
                [what, level, round(one.rps), f"{factor} × = {goal:,.0f}", round(two.rps), "met" if met else "MISSED",
                 f"{server:.2f}", f"{database:.2f}", f"{client:.2f}", f"{server + database + client:.2f}"]
            )  # fmt: skip
    return rows, ok


def main() -> int:
    with served(1) as one, served(2) as two:
        results, reused = _measure({1: one, 2: two})
    print(f"\nserve --workers 2 vs one worker, {database_label()} without Redis ({machine()}); {SENDS} sends a round")
    columns = ["placement", "what", "in flight", "workers", "per s", "× one", "p50 ms", "p99 ms", "errors",
               "server CPU ms/request", "× one", "server switches/request", "PostgreSQL CPU ms/request",
               "server cores",
               "CPU % per worker (+supervisor)",
               "requests % per worker (connections)", "sends rendered %",
               "events handled / marked only", "generator cores"]  # fmt: skip
    print(table(columns, _rows(results)))
    if reused:
        print(f"(chats opened again for want of fresh ones, per server: {reused})")
    rows, ok = _needs(results)
    print()
    columns = ["what", "in flight", "one worker /s", "target /s", "two workers /s", "target", "server cores needed",
               "PostgreSQL cores needed", "generator cores needed", "cores needed"]  # fmt: skip
    print(table(columns, rows))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
