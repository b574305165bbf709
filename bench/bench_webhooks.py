"""Webhook delivery on PostgreSQL (docs/webhooks.md): events committed through the outbox, delivered by
``doctordesk worker`` processes to a loopback receiver (``bench/webhook_receiver.py``, its own process) that
verifies every signature, fails 30 % of calls with 503, and is killed and restarted once half-way.

The receiver de-duplicates by ``webhook-id`` as the docs tell receivers to. Targets: 0 events lost, 0 events
delivered twice under different ids (so, after de-duplication, none twice), no bad signature, and at least
1,000 events/s from the first commit to the last delivery. A baseline with a receiver that never fails and is
never restarted is measured in the same run.

Environment: ``BENCH_WEBHOOK_EVENTS`` (default 20000), ``BENCH_WEBHOOK_WORKERS`` (worker processes, default 2),
``BENCH_WEBHOOK_CONCURRENCY``, ``BENCH_WEBHOOK_ENDPOINT_CONCURRENCY`` and ``BENCH_WEBHOOK_BATCH_SIZE`` (requests in
flight per worker, per endpoint, deliveries per claim; default: the service's defaults),
``DOCTORDESK_BENCH_POSTGRES_URL`` (the server to create a database of its own on, dropped afterwards; default: the
server of ``DOCTORDESK_TEST_POSTGRES_URL``, whose database is only connected through).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import ROOT, free_port, own_postgres_databases, table
from doctordesk.store.db import Database
from doctordesk.store.secrets.encryption import SecretBox, new_key

EVENTS = int(os.environ.get("BENCH_WEBHOOK_EVENTS", "20000"))
WORKERS = int(os.environ.get("BENCH_WEBHOOK_WORKERS", "2"))
TARGET_PER_SECOND = 1000
BATCH = 500  # events per committed transaction
WARM_UP = -1  # the version (sequence number) of the event that shows the workers are up


def postgres_server() -> str:
    return os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL") or os.environ.get(
        "DOCTORDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://root@127.0.0.1:5432/test"
    )


# One key for the run: this process stores the endpoint's signing secret, the workers read it.
SECRETS_KEY = new_key()


def database(url: str) -> Database:
    """The benchmark's handle on ``url``, sealing secrets with the run's key."""
    return Database(url, secret_box=SecretBox([SECRETS_KEY], source="the benchmark's key"))


def environment(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCTORDESK_") or "BENCH" in k or "TEST" in k}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        DOCTORDESK_DATABASE_URL=url,
        DOCTORDESK_SECRETS_KEY=SECRETS_KEY,  # the workers read the signing secret this process stored
        DOCTORDESK_PUSH_ADAPTER="none",
        DOCTORDESK_WEBHOOK_POLL_SECONDS="0.05",
        DOCTORDESK_WEBHOOK_BACKOFF_SECONDS="0.05",
        DOCTORDESK_WEBHOOK_BACKOFF_MAX_SECONDS="1",
        DOCTORDESK_WEBHOOK_LEASE_SECONDS="30",
        DOCTORDESK_WEBHOOK_TIMEOUT_SECONDS="5",
        # The receiver is on loopback: without this the workers refuse to dial it (docs/webhooks.md#addresses).
        DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES="true",
    )
    # The product's defaults unless asked otherwise.
    for name in ("CONCURRENCY", "ENDPOINT_CONCURRENCY", "BATCH_SIZE"):
        if f"BENCH_WEBHOOK_{name}" in os.environ:
            env[f"DOCTORDESK_WEBHOOK_{name}"] = os.environ[f"BENCH_WEBHOOK_{name}"]
    return env


class Receiver:
    """The receiver process; ``restart`` kills it (SIGKILL: no goodbye) and starts it again on the same port."""

    def __init__(self, log: Path, secret: str, fail_rate: float, env: dict[str, str]) -> None:
        self.port = free_port()
        self.log, self.secret, self.fail_rate, self.env = log, secret, fail_rate, env
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self) -> None:
        args = [str(self.port), str(self.log), self.secret, str(self.fail_rate)]
        self.process = subprocess.Popen([sys.executable, "-m", "bench.webhook_receiver", *args], env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("the receiver did not start")

    def restart(self) -> None:
        self.stop(kill=True)
        self.start()

    def stop(self, *, kill: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.process.wait(10)


def received(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in log.read_text().splitlines() if " " in line]  # type: ignore[misc]


@dataclass
class Result:
    label: str
    delivered: int
    lost: int
    twice_after_dedup: int
    redelivered: int
    bad_signatures: int
    seconds: float

    @property
    def per_second(self) -> float:
        return EVENTS / self.seconds if self.seconds else 0.0


async def prepare(url: str) -> tuple[list[int], str]:
    """The demo clinic in an empty database: its appointment ids and a new signing secret."""
    from doctordesk.domain.accounts.passwords import Passwords
    from doctordesk.domain.webhooks.signing_secrets import new_secret
    from doctordesk.store.migrate import upgrade
    from doctordesk.store.seed import demo as seed

    db = database(url)
    try:
        await upgrade(db.engine)
        async with db.transaction() as session:
            demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), datetime.now(UTC))
        return [int(a) for a in demo.appointments], new_secret()
    finally:
        await db.dispose()


async def enqueue(db: Any, appointments: list[int], sequence: range) -> None:
    """Events through the outbox hook, BATCH per commit."""
    from doctordesk.domain.event_kinds import EventKind
    from doctordesk.domain.events import DomainEvent
    from doctordesk.services.webhooks import outbox as webhook_outbox

    for start in range(sequence.start, sequence.stop, BATCH):
        events = [
            DomainEvent(
                EventKind.APPOINTMENT_APPROVE,
                topics=(),
                data={"appointment_id": appointments[n % len(appointments)], "status": 2, "version": n},
            )
            for n in range(start, min(start + BATCH, sequence.stop))
        ]
        async with db.transaction() as session:
            await webhook_outbox.enqueue(session, events, now=datetime.now(UTC))


async def register(db: Any, endpoint_url: str, secret: str) -> None:
    """A fresh outbox and one endpoint subscribed to every type."""
    from sqlalchemy import text

    from doctordesk.domain.webhooks import rules as webhooks
    from doctordesk.store.webhook_tables import WebhookEndpoint

    now = datetime.now(UTC)
    async with db.transaction() as session:
        await session.execute(text("TRUNCATE webhook_deliveries, webhook_endpoints RESTART IDENTITY CASCADE"))
        session.add(
            WebhookEndpoint(
                url=endpoint_url,
                description="bench",
                event_types=list(webhooks.SUBSCRIBABLE),
                include_content=False,
                secret=secret,
                enabled=True,
                created_at=now,
                updated_at=now,
            )
        )


async def delivered_count(db: Any) -> int:
    from sqlalchemy import text

    async with db.read() as session:
        return int(await session.scalar(text("SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'")))


async def run_case(
    url: str, appointments: list[int], secret: str, work: Path, *, label: str, fail_rate: float, restart: bool
) -> Result:
    env = environment(url)
    log = work / f"received-{fail_rate}-{restart}.log"
    receiver = Receiver(log, secret, fail_rate, env)
    receiver.start()
    db = database(url)
    await register(db, receiver.url, secret)
    workers = [subprocess.Popen([sys.executable, "-m", "doctordesk.cli", "worker"], env=env) for _ in range(WORKERS)]
    try:
        # One event first: once it is delivered, the workers are up and the clock can start.
        await enqueue(db, appointments, range(WARM_UP, WARM_UP + 1))
        deadline = time.monotonic() + 60
        while await delivered_count(db) < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers delivered nothing within 60 s")
            await asyncio.sleep(0.1)
        started = time.perf_counter()
        producing = asyncio.create_task(enqueue(db, appointments, range(EVENTS)))
        restarted = not restart
        deadline = time.monotonic() + 120 + EVENTS / 100
        while (done := await delivered_count(db) - 1) < EVENTS and time.monotonic() < deadline:
            if not restarted and done >= EVENTS // 2:
                receiver.restart()
                restarted = True
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - started
        await producing
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(15)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait(5)
        receiver.stop()
        await db.dispose()
    lines = [(i, seq) for i, seq in received(log) if seq != str(WARM_UP)]
    ids_of: dict[str, set[str]] = defaultdict(set)
    for webhook_id, seq in lines:
        ids_of[seq].add(webhook_id)
    bad = len(ids_of.pop("BAD", set()))
    wanted = {str(n) for n in range(EVENTS)}
    return Result(
        label=label,
        delivered=len(wanted & set(ids_of)),
        lost=len(wanted - set(ids_of)),
        twice_after_dedup=sum(1 for ids in ids_of.values() if len(ids) > 1),
        redelivered=len(lines) - len({i for i, _ in lines}),
        bad_signatures=bad,
        seconds=seconds,
    )


def main() -> int:
    print(f"Webhook delivery on PostgreSQL: {EVENTS} events, {WORKERS} worker processes (docs/webhooks.md)")
    with ExitStack() as stack:
        try:
            (url,) = stack.enter_context(own_postgres_databases(postgres_server(), ["doctordesk_bench_webhooks"]))
        except Exception as exc:  # no PostgreSQL here: say so
            print(f"skipped: PostgreSQL not reachable ({type(exc).__name__}: {exc})")
            return 1
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-webhooks-"))
        appointments, secret = asyncio.run(prepare(url))
        cases = [("baseline: receiver never fails", 0.0, False), ("30 % failures, receiver restarted once", 0.3, True)]
        results = [
            asyncio.run(run_case(url, appointments, secret, Path(tmp), label=label, fail_rate=rate, restart=restart))
            for label, rate, restart in cases
        ]
    print(
        table(
            [
                "case",
                "delivered",
                "lost",
                "twice after de-dup",
                "redelivered (same id)",
                "bad signatures",
                "seconds",
                "events/s",
            ],
            [
                (
                    r.label,
                    r.delivered,
                    r.lost,
                    r.twice_after_dedup,
                    r.redelivered,
                    r.bad_signatures,
                    r.seconds,
                    f"{r.per_second:,.0f}",
                )
                for r in results
            ],
        )
    )
    failing = results[-1]
    missed = []
    if failing.lost or failing.twice_after_dedup or failing.bad_signatures:
        missed.append("events lost, doubled or badly signed")
    if failing.per_second < TARGET_PER_SECOND:
        missed.append(f"fewer than {TARGET_PER_SECOND:,} events/s")
    print("targets: " + ("met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
