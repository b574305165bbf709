"""Open lists at the real cadence, open loop: ``LISTS`` appointment lists open at once, each with its own
sign-in (token) and client id, each polling every ``INTERVAL`` seconds with the state it got back — on a fixed
schedule, whether or not the server kept up (a late answer counts from when its poll was due) — while every doctor's
list changes once a minute (the doctor sends a chat message on one of their appointments, from that chat open, with its
state, as the web app does, on a connection of the doctor's own: an event on their topic).
One server process, default settings, for ``SECONDS``.

Measured: the poll latency (p50, p99, max; from the moment the poll was due), the server process's CPU (its user +
system time from ``/proc/<pid>/stat`` over the run, as % of one core), and whether every change was seen: the first
poll of each of the doctor's lists sent after the change's answer must come back with another state than the one the
list held when the change was sent (the old page from memory would be a miss). A list, like a real client, never
has two polls in flight: a poll that falls due while the previous one is unanswered is skipped (and counted).
Targets: p99 ≤ 50 ms, CPU ≤ 50 % of one core, no change missed, and the changes' chat sends answered within 100 ms
at the p99 (their latency counts from when each send was due, as a poll's does; p50, p99, max and errors per shape
in the table). The load generator also prints how late its polls left it (sent minus due: a tail there is the
generator's or the machine's, not the server's), the polls' round trips (answered minus sent) and the sends' (the
same, from when each left the generator).

Baseline (same machine, same run): the same open-loop schedule against a separate bare FastAPI app
(``bench/bare_app.py``) for ``BASELINE_SECONDS``: what the load generator and the machine cost by themselves.

The lists are the three demo doctors' by default (``LISTS / 3`` lists each); each doctor's change then renders all
of that doctor's lists once, so every list renders about once a minute, every second poll — the load the issue
names. ``BENCH_OPEN_DOCTORS=N`` (more than 3) spreads the lists over N doctors imported for the run (``doctordesk
import``, ``APPOINTMENTS_EACH`` appointments each around now), as in a clinic where few lists show the same doctor:
the same renders a minute, but N changes a minute, and no two of a doctor's lists could share much.

Two shapes, one table, each beside the bare app under the same generator and shape (and the ratio of the p99s):
"spread" (the lists' polls spread evenly over the interval, the doctors' changes over the minute) and "Monday 08:00"
(every list's poll due within the same ``BURST`` seconds and every doctor's change sent at once just before, a
clinic opening: each burst renders every list at once). A poll answered 503 SERVICE_BUSY (the pool's back-pressure)
is counted apart; its list polls again at its next time. ``BENCH_OPEN_SHAPES`` (``spread,monday``) picks them.

Sizes: ``BENCH_OPEN_LISTS`` (10000), ``BENCH_OPEN_DOCTORS`` (3), ``BENCH_OPEN_SECONDS`` (300), ``BENCH_OPEN_INTERVAL``
(30), ``BENCH_OPEN_BASELINE_SECONDS`` (60; 0: none). PostgreSQL when
``DOCTORDESK_BENCH_POSTGRES_URL`` is set, else SQLite (sign-ins and opening the lists are sent again after a 429 or
a 503, whose ``Retry-After`` they honour: the pool's back-pressure is not an error of the set-up). A smoke run:
``BENCH_OPEN_LISTS=500 BENCH_OPEN_SECONDS=30 make bench BENCH=open_loop``.

``BENCH_OPEN_PROBE=1`` serves the service as ``bench/probed_app.py`` and prints, per shape, what its collector did
(passes by generation, their CPU), its event loop's lag and the stacks of its stalls, and what a full pass of the
collector costs over the heap the run left; with ``UVICORN_LOOP=asyncio`` also every callback's CPU by request
(uvloop's cannot be wrapped). For finding a tail, not for the table: the probe's thread takes the interpreter often.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import heapq
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import func, select, text, update

from bench import served_histograms
from bench.app import BARE_PATH
from bench.common import Server, database_label, machine, percentile, table
from bench.probed_app import PROBE_PATH
from bench.procs import cpu_seconds, postgres_cpu_seconds
from doctordesk.store.db import Database
from doctordesk.store.tables import Appointment, User

LISTS = int(os.environ.get("BENCH_OPEN_LISTS", "10000"))
SECONDS = float(os.environ.get("BENCH_OPEN_SECONDS", "300"))
INTERVAL = float(os.environ.get("BENCH_OPEN_INTERVAL", "30"))
BASELINE_SECONDS = float(os.environ.get("BENCH_OPEN_BASELINE_SECONDS", "60"))
CHANGE_EVERY = 60.0  # seconds between two changes of one doctor's list
DEMO_DOCTORS = ("doctor1", "doctor2", "doctor3")
# More doctors than the demo's three (``BENCH_OPEN_DOCTORS``): imported (``doctordesk import``), each with
# ``APPOINTMENTS_EACH`` appointments around now, signing in with the demo's password.
DOCTOR_COUNT = int(os.environ.get("BENCH_OPEN_DOCTORS", "3"))
APPOINTMENTS_EACH = 12
CONNECTIONS = 100  # keep-alive connections the lists share (real clients hold one each; the server's cost is per poll)
TARGET_P99_MS, TARGET_CPU, TARGET_SEND_P99_MS = 50.0, 50.0, 100.0
SHAPES = tuple(os.environ.get("BENCH_OPEN_SHAPES", "spread,monday").split(","))
BURST = float(os.environ.get("BENCH_OPEN_BURST", "2"))  # Monday 08:00: every list's poll due within these seconds
LIST = "/profile/appointments"
SEND = "/profile/messages/send-message"
CHAT = "/profile/messages/user-chat"
# ``BENCH_OPEN_PROBE=1``: the service runs as ``bench/probed_app.py`` and each shape prints what its collector and
# event loop did (passes and their pauses, the loop's lag, the stacks of its stalls). Off by default: the probe's
# watchdog thread takes the interpreter every few milliseconds.
PROBE = os.environ.get("BENCH_OPEN_PROBE", "") == "1"
PROBED_APP = "bench.probed_app:create_app"
# Thousands of sign-ins of three users from one address: the throttle's allowances raised (sign-ins are set-up).
ENV = {"DOCTORDESK_LOGIN_MAX_FAILURES": "1000", "DOCTORDESK_LOGIN_USERNAME_MAX_FAILURES": "100000"}


@dataclass
class OpenList:
    doctor: str
    headers: dict[str, str]
    state: str
    opened: str = ""  # the state its PUT gave
    polls: list[tuple[float, float, str]] = field(default_factory=list)  # (sent at, answered at, state got)
    waiting: bool = False  # a poll of this list is in flight


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    late: list[float] = field(default_factory=list)  # ms each poll left the load generator after it was due
    round_trips: list[float] = field(default_factory=list)  # ms from sending each poll to its answer
    sends: list[float] = field(default_factory=list)  # ms each change (chat send) took, from when it was due
    send_trips: list[float] = field(default_factory=list)  # ms from each send leaving the generator to its answer
    busy: int = 0  # polls answered 503 SERVICE_BUSY (back-pressure: the database's pool was in use)
    failures: Counter[str] = field(default_factory=Counter)  # what went wrong, counted

    def errors(self, kind: str) -> int:
        """Failures of the polls (``"poll"``) or of the changes' chat sends (``"change"``)."""
        return sum(n for what, n in self.failures.items() if what.startswith(f"{kind} "))

    skipped: int = 0  # polls that fell due while the list's previous poll was unanswered
    changes: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # doctor → (sent, answered) each


async def _postgres_sessions(server: Server) -> int | None:
    """How many connections PostgreSQL has accepted to the run's database so far (None on SQLite)."""
    if "postgresql" not in server.database_url:
        return None
    db = Database(server.database_url)
    try:
        async with db.read() as session:
            query = text("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
            return int((await session.execute(query)).scalar_one())
    finally:
        await db.dispose()


async def _again(send: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response:
    """A set-up request (sign-in, opening a list), sent again after its ``Retry-After`` while the server answers
    429 (the login throttle) or 503 (the database's pool busy: PostgreSQL's pool is small on two cores)."""
    for _ in range(20):
        answer = await send()
        if answer.status_code not in (429, 503):
            break
        await asyncio.sleep(float(answer.headers.get("retry-after", "1")))
    answer.raise_for_status()
    return answer


async def _open(http: httpx.AsyncClient, n: int, doctors: list[str], gate: asyncio.Semaphore) -> OpenList:
    doctor = doctors[n % len(doctors)]
    async with gate:
        login = await _again(lambda: http.post("/auth/login", data={"username": doctor, "password": "demo"}))
        headers = {"Authorization": f"Bearer {login.json()['access_token']}", "X-Client-Id": f"open-list-{n}"}
        page = await _again(lambda: http.put(LIST, headers=headers))
    state = page.json()["state"]
    return OpenList(doctor, headers, state, opened=state)


async def _chat_of(
    http: httpx.AsyncClient, doctor: str, appointment: int, gate: asyncio.Semaphore
) -> tuple[dict[str, str], int, str]:
    """The doctor's headers for their chat on ``appointment`` (one that takes messages), and the state of that chat
    opened: a doctor sends from the open chat, as the web app does, with its state, replaced by each answer."""
    async with gate:  # a thousand sign-ins at once would only queue in the client's pool
        login = await _again(lambda: http.post("/auth/login", data={"username": doctor, "password": "demo"}))
        headers = {"Authorization": f"Bearer {login.json()['access_token']}", "X-Client-Id": f"changer-{doctor}"}
        opened = await _again(lambda: http.put(f"{CHAT}?appointment-id={appointment}", headers=headers))
    return headers, appointment, opened.json()["state"]


def _clinic_file(count: int, now: datetime) -> dict[str, list[dict[str, object]]]:
    """An import file: ``count`` doctors at one location, each with a patient of their own and
    ``APPOINTMENTS_EACH`` appointments from three days ago to ten days ahead in every status a list shows."""
    statuses = ("requested", "approved", "pending-response", "completed", "declined", "approved")
    appointments = [
        {
            "external_id": f"A-open-{d}-{k}",
            "patient": f"P-open-{d}",
            "doctor": f"D-open-{d}",
            "location": "L-open",
            "start": (now + timedelta(days=k - 3, minutes=15 * (d % 32))).replace(second=0, microsecond=0).isoformat(),
            "status": statuses[k % len(statuses)] if k >= 3 else "completed",
            "decline_reason": "Please book a longer visit." if statuses[k % len(statuses)] == "declined" else "",
        }
        for d in range(count)
        for k in range(APPOINTMENTS_EACH)
    ]
    return {
        "locations": [{"external_id": "L-open", "name": "Open Loop Clinic", "timezone": "Europe/Berlin"}],
        "doctors": [
            {"external_id": f"D-open-{d}", "username": f"open{d}", "name": f"Dr. Open {d}", "specialty": "General"}
            for d in range(count)
        ],
        "patients": [{"external_id": f"P-open-{d}", "name": f"Patient Open {d}"} for d in range(count)],
        "appointments": appointments,
    }


def _doctors(server: Server) -> list[str]:
    """The doctors whose lists are open: the demo's three, or ``DOCTOR_COUNT`` imported ones."""
    if DOCTOR_COUNT <= len(DEMO_DOCTORS):
        return list(DEMO_DOCTORS[:DOCTOR_COUNT])
    path = Path(server.data_dir) / "open-loop-clinic.json"
    path.write_text(json.dumps(_clinic_file(DOCTOR_COUNT, datetime.now(UTC))), encoding="utf-8")
    env = {**os.environ, "DOCTORDESK_DATABASE_URL": server.database_url, "DOCTORDESK_DATA_DIR": server.data_dir}
    subprocess.run(
        [sys.executable, "-m", "doctordesk.cli", "import", str(path), "--no-progress"],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    names = [f"open{d}" for d in range(DOCTOR_COUNT)]

    async def with_demo_password() -> None:  # an imported doctor has no password until an admin sets one
        db = Database(server.database_url)
        try:
            async with db.transaction() as session:
                demo = select(User.password_hash).where(User.username == "doctor1").scalar_subquery()
                await session.execute(update(User).where(User.username.in_(names)).values(password_hash=demo))
        finally:
            await db.dispose()

    asyncio.run(with_demo_password())
    return names


async def _chat_appointments(server: Server, doctors: list[str]) -> dict[str, int]:
    """One appointment per doctor whose chat takes messages."""
    db = Database(server.database_url)
    try:
        async with db.read() as session:
            rows = await session.execute(
                select(User.username, func.min(Appointment.id))
                .join(Appointment, Appointment.doctor_id == User.id)
                .where(User.username.in_(doctors), Appointment.chat_enabled.is_(True))
                .group_by(User.username)
            )
            return {name: int(appointment) for name, appointment in rows}
    finally:
        await db.dispose()


async def _poll_connection(
    http: httpx.AsyncClient, path: str, schedule: list[tuple[float, int]], lists: list[OpenList], run: Run, end: float
) -> None:
    """One keep-alive connection's worth of polling: take the list whose poll is due first, wait for its time, send it,
    and put the list back at its next time. A poll sent late (every connection busy) counts from when it was due."""
    while schedule and schedule[0][0] < end:
        due, n = heapq.heappop(schedule)
        heapq.heappush(schedule, (due + INTERVAL, n))
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        open_list = lists[n]
        if open_list.waiting:
            run.skipped += 1
            continue
        open_list.waiting = True
        sent = time.monotonic()
        try:
            answer = await http.patch(path, headers={**open_list.headers, "X-Screen-State": open_list.state})
            done = time.monotonic()
            if answer.status_code == 503 and answer.json().get("code") == "SERVICE_BUSY":
                run.busy += 1
            elif answer.status_code != 200:
                run.failures[f"poll {answer.status_code}"] += 1
            else:
                state = answer.json().get("state", "")  # the bare app answers {}
                open_list.polls.append((sent, done, state))
                open_list.state = state
            run.latencies.append((done - due) * 1000)
            run.late.append((sent - due) * 1000)
            run.round_trips.append((done - sent) * 1000)
        except httpx.HTTPError as error:
            run.failures[f"poll {type(error).__name__}"] += 1
        finally:
            open_list.waiting = False


async def _change_forever(
    http: httpx.AsyncClient, doctor: str, chat: tuple[dict[str, str], int, str], first: float, run: Run, end: float
) -> None:
    (headers, appointment, state), due, n = chat, first, 0
    while due < end:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        n += 1
        sending = time.monotonic()
        try:
            sent = await http.post(
                SEND,
                data={"content": f"Change {n}", "appointment-id": str(appointment)},
                headers={**headers, "X-Screen-State": state},
            )
        except httpx.HTTPError as error:  # counted like a poll's (a kept-alive connection the server had closed)
            run.failures[f"change {type(error).__name__}"] += 1
            due += CHANGE_EVERY
            continue
        if sent.status_code == 200:
            answered = time.monotonic()
            state = sent.json()["state"]
            run.changes.setdefault(doctor, []).append((sending, answered))
            run.sends.append((answered - due) * 1000)
            run.send_trips.append((answered - sending) * 1000)
        else:
            run.failures[f"change {sent.status_code}"] += 1
        due += CHANGE_EVERY


def _seen(lists: list[OpenList], run: Run) -> tuple[int, int]:
    """(changes × lists checked, missed): for every change and every list of its doctor, the first poll sent after
    the change was answered came back with another state than the list held when the change was sent (the state of
    its last poll answered before then: the server read it before the change). A poll answered after the change was
    sent may already carry the new state; the next one then rightly answers "unchanged" with it."""
    checked = missed = 0
    for open_list in lists:
        for sending, answered in run.changes.get(open_list.doctor, []):
            before = open_list.opened
            for _, done, state in open_list.polls:
                if done >= sending:
                    break
                before = state
            after = next((state for sent, _, state in open_list.polls if sent > answered), None)
            if after is None:
                continue  # the run ended before this list's next poll
            checked += 1
            missed += after == before
    return checked, missed


def _first_polls(shape: str, start: float, count: int) -> list[tuple[float, int]]:
    """When each list polls first: spread evenly over one interval, or (Monday 08:00) all within ``BURST`` s."""
    window = BURST if shape == "monday" else INTERVAL
    return [(start + window * n / count, n) for n in range(count)]


def _first_change(shape: str, start: float, i: int, doctors: int) -> float:
    """When doctor ``i`` first changes their list: spread over the minute, or (Monday 08:00) all at once just
    before the lists' burst (the burst then renders every list)."""
    if shape == "monday":
        return start - 0.5
    return start + CHANGE_EVERY * (i + 0.5) / doctors


async def _open_loop(
    server: Server, path: str, *, seconds: float, doctors: list[str] | None, shape: str = "spread"
) -> tuple[Run, list[OpenList], float]:
    """The run, its lists, and the server's CPU over the polling (signing in excluded), as % of one core."""
    assert server.process is not None
    base, pid, lists_count = server.url, server.process.pid, LISTS
    limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    run = Run()
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=60, limits=limits))
        if doctors:
            gate = asyncio.Semaphore(8)
            appointments = await _chat_appointments(server, doctors)
            chats = await asyncio.gather(*(_chat_of(http, d, appointments[d], gate) for d in doctors))
            signing_in = time.monotonic()
            lists = list(await asyncio.gather(*(_open(http, n, doctors, gate) for n in range(lists_count))))
            print(f"  {lists_count} lists signed in and opened in {time.monotonic() - signing_in:.0f} s", flush=True)
        else:  # the bare app: no sign-in, the same schedule of PATCHes
            lists = [OpenList("", {"X-Client-Id": f"open-list-{n}"}, "") for n in range(lists_count)]
        # The load generator's own pauses count in the latencies: its ten thousand lists and their polls' records
        # are long-lived, so full passes of the cyclic collector over them (tens of ms) are kept out of the run.
        gc.collect()
        gc.freeze()
        gc.disable()
        # Each polling task has a client of its own with one connection: in one client of CONNECTIONS connections,
        # httpcore checks every pooled connection (a system call each) for every request it assigns, which took a
        # whole core at 10,000 lists of 1,000 doctors.
        own = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=60, limits=own))
            for _ in range(CONNECTIONS)
        ]
        # Each doctor sends on a connection of their own, as from their own browser (a thousand sends due at once
        # in one client's pool queued there, in the generator); plain HTTP: no TLS context made for each.
        senders = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=60, limits=own, verify=False))
            for _ in doctors or ()
        ]
        # Their connections opened before the clock starts: a hundred connects in the first second would be the
        # run's tail (a dropped SYN is sent again after a second), not the service's.
        await asyncio.gather(*(client.get("/healthz") for client in clients))
        start = time.monotonic() + 1.0
        end = start + seconds
        # The lists' first polls spread evenly over one interval; CONNECTIONS tasks send them (not one task per
        # list: ten thousand requests waiting in the client's pool made the load generator the bottleneck).
        schedule = _first_polls(shape, start, lists_count)
        tasks = [_poll_connection(client, path, schedule, lists, run, end) for client in clients]
        if doctors:
            tasks += [
                _change_forever(senders[i], doctor, chats[i], _first_change(shape, start, i, len(doctors)), run, end)
                for i, doctor in enumerate(doctors)
            ]
        if PROBE and doctors:
            (await http.get(PROBE_PATH, params={"reset": "true"})).raise_for_status()
        sessions_before = await _postgres_sessions(server) if doctors else None
        histograms_before = await served_histograms.read(http) if doctors else None
        before, own_before, database_before = cpu_seconds(pid), cpu_seconds(os.getpid()), postgres_cpu_seconds()
        try:
            await asyncio.gather(*tasks)
        finally:
            gc.enable()
        elapsed = time.monotonic() - start + 1.0
        cpu = (cpu_seconds(pid) - before) / elapsed * 100
        database_cpu = (postgres_cpu_seconds() - database_before) / elapsed * 100
        if PROBE and doctors:  # after the CPU is taken: the probe's report ends with a full pass of the collector
            report = (await http.get(PROBE_PATH, params={"full": "true"}, timeout=120)).text
            print(f"  server's probe ({shape}): {report}", flush=True)
        # The load generator's own CPU: near 100 % it, not the server, sets the pace (the latencies then say
        # nothing about the server).
        sends = f"; sends answered after they left it by {_p50_p99(run.send_trips)}" if run.send_trips else ""
        print(
            f"  load generator: {(cpu_seconds(os.getpid()) - own_before) / elapsed * 100:.0f} % of one core; polls "
            f"left it after they were due by {_p50_p99(run.late)}, max {max(run.late, default=0.0):.2f} ms; "
            f"answered after sent by {_p50_p99(run.round_trips)}{sends}"
        )
        if histograms_before is not None:
            print(served_histograms.inside(histograms_before, await served_histograms.read(http), LIST, SEND))
        if sessions_before is not None:  # the database shares the machine's cores with the server and the generator
            opened = (await _postgres_sessions(server) or 0) - sessions_before - 1  # less the count's own
            print(f"  PostgreSQL: {database_cpu:.0f} % of one core; {opened} connections opened during the run")
    return run, lists, cpu


def _p50_p99(values: list[float]) -> str:
    return f"p50 {percentile(values, 50):.2f} ms, p99 {percentile(values, 99):.2f} ms"


def _row(label: str, shape: str, run: Run, cpu: float, seen: str, bare_p99: float | None) -> list[object]:
    p99 = percentile(run.latencies, 99)
    ratio = f"{p99 / bare_p99:.1f}×" if bare_p99 else "-"
    sends: list[object] = ["-"] * 5
    if bare_p99 is not None or run.sends or run.errors("change"):  # the service's row (the bare app sends none)
        sends = [len(run.sends), percentile(run.sends, 50), percentile(run.sends, 99), max(run.sends, default=0.0),
                 run.errors("change")]  # fmt: skip
    return [label, shape, len(run.latencies), run.busy, percentile(run.latencies, 50), p99,
            max(run.latencies, default=0.0), cpu, run.errors("poll"), seen, ratio, *sends]  # fmt: skip


def main() -> int:
    print(
        f"{LISTS} open lists of {DOCTOR_COUNT} doctors polling every {INTERVAL:g} s, one change per doctor per minute, "
        f"{SECONDS:g} s a shape ({', '.join(SHAPES)}; Monday 08:00: polls due within {BURST:g} s), one process "
        f"({machine()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})"
    )
    served: dict[str, tuple[Run, list[OpenList], float]] = {}
    bare: dict[str, tuple[Run, float]] = {}
    with Server(postgres=True, env=ENV, app=PROBED_APP if PROBE else Server.app) as server:
        doctors = _doctors(server)
        for shape in SHAPES:
            served[shape] = asyncio.run(_open_loop(server, LIST, seconds=SECONDS, doctors=doctors, shape=shape))
    if BASELINE_SECONDS > 0:
        with Server(app="bench.bare_app:create_app") as bare_server:
            for shape in SHAPES:
                base_run, _, base_cpu = asyncio.run(
                    _open_loop(bare_server, BARE_PATH, seconds=BASELINE_SECONDS, doctors=None, shape=shape)
                )
                bare[shape] = (base_run, base_cpu)
    rows, ok = [], True
    for shape in SHAPES:
        run, lists, cpu = served[shape]
        checked, missed = _seen(lists, run)
        print(f"  {shape}: polls skipped (previous poll unanswered) {run.skipped}; errors: {dict(run.failures)}")
        bare_p99 = percentile(bare[shape][0].latencies, 99) if shape in bare else None
        rows.append(_row(database_label(), shape, run, cpu, f"{checked - missed}/{checked}", bare_p99))
        if shape in bare:
            rows.append(_row("bare app (baseline)", shape, bare[shape][0], bare[shape][1], "-", None))
        ok = ok and percentile(run.latencies, 99) <= TARGET_P99_MS and cpu <= TARGET_CPU and missed == 0
        ok = ok and run.errors("poll") + run.errors("change") == 0 and percentile(run.sends, 99) <= TARGET_SEND_P99_MS
    headers = ["server", "shape", "polls", "busy 503", "p50 ms", "p99 ms", "max ms", "server CPU %", "poll errors",
               "changes seen", "p99 / bare p99", "sends", "send p50 ms", "send p99 ms", "send max ms",
               "send errors"]  # fmt: skip
    print(table(headers, rows))
    print(
        f"targets: p99 ≤ {TARGET_P99_MS:g} ms, CPU ≤ {TARGET_CPU:g} % of one core, every change seen, chat sends' "
        f"p99 ≤ {TARGET_SEND_P99_MS:g} ms, no error: {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
