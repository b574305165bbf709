"""How the webhook dispatcher takes, sends and records deliveries, on SQLite and PostgreSQL with a real receiver
on loopback: batch claims by several dispatchers never send one delivery twice at once, requests in flight stay
within the endpoint's window and the overall bound, outcomes recorded together survive a stop, unsent deliveries
are given back without counting an attempt, and a killed worker's lease is retried."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import ssl
import subprocess
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from doctordesk.config import Settings
from doctordesk.domain.clock import SystemClock
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.runtime import Runtime
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.store.db import Database
from doctordesk.store.seed.demo import Demo
from doctordesk.store.webhook_tables import WebhookDelivery
from doctordesk.workers.webhook_dispatcher import WebhookDispatcher
from tests.support import processes
from tests.support.fhir import FHIR_JSON
from tests.support.fhir_subscriptions import send, subscriber_key, subscription, valid
from tests.support.review import REQUESTED, aid, approve_url
from tests.support.webhook_receiver import WebhookReceiver


async def queue(runtime: Runtime, demo: Demo, count: int, *, start: int = 0) -> None:
    """``count`` approvals through the outbox in one transaction (``data.version`` numbers them)."""
    ids = list(demo.appointments)
    events = [
        DomainEvent(
            EventKind.APPOINTMENT_APPROVE,
            topics=(),
            data={"appointment_id": ids[n % len(ids)], "status": 2, "version": n},
        )
        for n in range(start, start + count)
    ]
    async with runtime.db.transaction() as session:
        await webhook_outbox.enqueue(session, events, now=runtime.clock.now())


async def rows(runtime: Runtime) -> list[WebhookDelivery]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id))).all())


async def until(check: Callable[[], bool | Awaitable[bool]], *, seconds: float = 60) -> None:
    """Wait until ``check()`` (a plain or an awaited answer) holds."""
    deadline = time.monotonic() + seconds
    while True:
        answer = check()
        if await answer if inspect.isawaitable(answer) else answer:
            return
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def dispatcher_for(runtime: Runtime, settings: Settings, db: Database | None = None, **changes: object) -> Counting:
    return Counting(db or runtime.db, settings=settings.model_copy(update=changes), clock=runtime.clock)


class Counting(WebhookDispatcher):
    """A dispatcher that counts what it leased and how often it recorded outcomes."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.leased = 0
        self.recordings = 0

    async def _claim(self) -> int:
        found = await super()._claim()
        self.leased += found
        return found

    async def _settle(self, *args, **kwargs) -> set[int]:
        self.recordings += 1
        return await super()._settle(*args, **kwargs)


class Meeting(Counting):
    """A dispatcher that, after its first lease, waits for the other one's first lease."""

    def __init__(self, *args, meet: asyncio.Barrier, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.meet = meet
        self.met = False

    async def _claim(self) -> int:
        found = await super()._claim()
        if found and not self.met:
            self.met = True
            await asyncio.wait_for(self.meet.wait(), 60)
        return found


async def test_concurrent_batch_claims_never_take_one_delivery_twice(runtime, demo, settings, receiver, register):
    await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 200)
    databases = [Database.from_settings(settings) for _ in range(4)]
    now = runtime.clock.now()
    try:

        async def drain(db: Database) -> list[int]:
            taken: list[int] = []
            while batch := await webhook_outbox.claim(db, now=now, limit=7, lease_seconds=60):
                taken.extend(d.id for d in batch)
            return taken

        results = await asyncio.gather(*(drain(db) for db in databases))
    finally:
        for db in databases:
            await db.dispose()
    everything = [i for r in results for i in r]
    assert len(everything) == len(set(everything)) == 200
    assert all((r.attempts, r.next_attempt_at) == (1, now + timedelta(seconds=60)) for r in await rows(runtime))


async def test_two_running_dispatchers_deliver_every_event_once(runtime, demo, settings, receiver, register):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 150)
    receiver.delay = 0.005
    databases = [Database.from_settings(settings) for _ in range(2)]
    both_leased = asyncio.Barrier(2)  # neither sends before both hold a batch: a busy machine cannot let one take all
    # A long lease and a long timeout: a delivery left waiting past half its lease is given back, and a request that
    # times out is sent again; either is leased twice (counted twice), which a slow machine must not bring about.
    changes = {
        "webhook_batch_size": 10,
        "webhook_poll_seconds": 0.05,
        "webhook_lease_seconds": 3600,
        "webhook_timeout_seconds": 60,
    }
    dispatchers = [
        Meeting(db, settings=settings.model_copy(update=changes), clock=runtime.clock, meet=both_leased)
        for db in databases
    ]
    try:
        for d in dispatchers:
            d.start()

        async def all_delivered() -> bool:
            return all(r.status == "delivered" for r in await rows(runtime))

        await until(all_delivered)
    finally:
        for d in dispatchers:
            await d.stop()
        for db in databases:
            await db.dispose()
    got = receiver.requests()
    ids = [r.webhook_id for r in got]
    assert len(ids) == len(set(ids)) == 150  # no delivery sent twice, none left out
    assert sorted(r.verified(endpoint["secret"])["data"]["version"] for r in got) == list(range(150))
    # Each delivery leased once, by one of the two (which one takes how many is the machine's timing: in a loaded
    # run one of them once took all 150).
    leased = [d.leased for d in dispatchers]
    assert sum(leased) == 150, leased
    assert {(r.status, r.attempts, r.last_status_code) for r in await rows(runtime)} == {("delivered", 1, 204)}


async def test_requests_in_flight_stay_within_each_endpoints_window_and_the_overall_bound(
    runtime, demo, settings, receiver, register
):
    for path in ("/a", "/b", "/c"):
        await register(receiver.url(path), ["appointment.approved"])
    await queue(runtime, demo, 20)
    receiver.delay = 0.05
    dispatcher = dispatcher_for(runtime, settings, webhook_concurrency=6, webhook_endpoint_concurrency=4)
    try:
        await dispatcher.drain()
    finally:
        await dispatcher.close()
    assert len({r.webhook_id for r in receiver.requests()}) == len(receiver.requests()) == 60
    assert all(receiver.peak(path) <= 4 for path in ("/a", "/b", "/c"))
    assert 4 <= receiver.peak() <= 6
    # Windows grew from 1 (the overall bound of 6 shared by three endpoints taking turns leaves each 2 or more).
    assert max(receiver.peak(path) for path in ("/a", "/b", "/c")) >= 2


async def test_an_endpoint_that_keeps_failing_gets_one_request_at_a_time(runtime, demo, settings, receiver, register):
    await register(receiver.url("/ok"), ["appointment.approved"])
    failing = await register(receiver.url("/down"), ["appointment.approved"])
    receiver.status_for["/down"] = 500
    receiver.delay = 0.03
    await queue(runtime, demo, 12)
    dispatcher = dispatcher_for(runtime, settings)
    try:
        await dispatcher.drain()
    finally:
        await dispatcher.close()
    # One at a time (the receiver counts a request out before it answers).
    assert receiver.peak("/down") == 1 < receiver.peak("/ok") and len(receiver.requests("/down")) == 12
    assert receiver.peak("/ok") >= 3 and len(receiver.requests("/ok")) == 12
    down = [r for r in await rows(runtime) if r.endpoint_id == failing["id"]]
    assert {(r.status, r.attempts, r.last_status_code) for r in down} == {("pending", 1, 500)}


async def test_outcomes_recorded_together_survive_a_stop_and_nothing_delivered_goes_out_again(
    runtime, demo, settings, clock, receiver, register
):
    await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 40)
    receiver.fail_next(10, 503)
    dispatcher = dispatcher_for(runtime, settings, webhook_poll_seconds=30)
    dispatcher.start()
    try:
        await until(lambda: len(receiver.requests()) >= 40)
    finally:
        await dispatcher.stop()  # at once: outcomes not recorded yet are recorded on the way out
    assert dispatcher.recordings < 20  # recorded together, not one transaction per delivery
    stored = await rows(runtime)
    assert sum(r.status == "delivered" for r in stored) == 30
    retried = [r for r in stored if r.status == "pending"]
    assert len(retried) == 10
    assert all(r.attempts == 1 and r.last_status_code == 503 and r.next_attempt_at > clock.now() for r in retried)
    clock.advance(timedelta(seconds=10))
    fresh = dispatcher_for(runtime, settings)
    try:
        await fresh.drain()
    finally:
        await fresh.close()
    assert {(r.status, r.attempts) for r in await rows(runtime)} == {("delivered", 1), ("delivered", 2)}
    ids = [r.webhook_id for r in receiver.requests()]
    assert len(ids) == 50 and len(set(ids)) == 40  # only the ten retried went out again


class HeldRecording(Counting):
    """A dispatcher whose first recording waits for the test (a slow database), and whose sends after the first
    wait for that recording to start, so that their outcomes arrive while it runs."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.recording = asyncio.Event()
        self.go_on = asyncio.Event()
        self.sends = 0

    async def _send(self, due):
        self.sends += 1
        if self.sends > 1:
            await self.recording.wait()
        return await super()._send(due)

    async def _settle(self, *args, **kwargs) -> set[int]:
        if not self.recording.is_set():
            self.recording.set()
            await self.go_on.wait()
        return await super()._settle(*args, **kwargs)


async def test_outcomes_that_arrive_while_the_last_recording_runs_are_recorded_before_the_stop_ends(
    runtime, demo, settings, receiver, register
):
    await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 12)
    dispatcher = HeldRecording(runtime.db, settings=settings.model_copy(update={"webhook_poll_seconds": 30}),
                               clock=runtime.clock)  # fmt: skip
    dispatcher.start()
    stopping = None
    try:
        await asyncio.wait_for(dispatcher.recording.wait(), 30)  # the first outcomes are being recorded
        await until(lambda: len(receiver.requests()) >= 12 and dispatcher._sending == 0)
        stopping = asyncio.create_task(dispatcher.stop())
        await until(lambda: dispatcher._closing)  # every request ended; the loop is closing
    finally:
        dispatcher.go_on.set()
        await (stopping or dispatcher.stop())
    assert dispatcher.recordings == 2  # the held recording, then the outcomes that came in meanwhile
    assert [r.status for r in await rows(runtime)] == ["delivered"] * 12


async def test_deliveries_not_sent_to_an_endpoint_that_stopped_answering_are_given_back_uncounted(
    runtime, demo, settings, clock, receiver, register
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 5)
    receiver.down()
    dispatcher = dispatcher_for(runtime, settings)
    try:
        assert await dispatcher.round()
        [tried, *others] = await rows(runtime)
        # The first send found nobody: the endpoint is held, the other four were not sent and cost no attempt.
        assert (tried.attempts, tried.last_status_code) == (1, None) and "Connect" in (tried.last_error or "")
        assert all(r.attempts == 0 and "not sent" in (r.last_error or "") for r in others)
        hold = others[0].next_attempt_at - clock.now()
        assert timedelta(seconds=4) <= hold <= timedelta(seconds=6)  # the first hold: the backoff's base
        assert all(r.next_attempt_at == others[0].next_attempt_at for r in others)
        assert not await dispatcher.round()  # nothing due during the hold
        receiver.up()
        clock.advance(timedelta(seconds=7))
        await dispatcher.drain()
    finally:
        await dispatcher.close()
    assert {(r.status, r.endpoint_id) for r in await rows(runtime)} == {("delivered", endpoint["id"])}
    assert sorted(r.attempts for r in await rows(runtime)) == [1, 1, 1, 1, 2]
    assert len({r.webhook_id for r in receiver.requests()}) == 5


async def test_a_killed_workers_lease_is_retried_under_the_same_webhook_id(
    database_url, demo, runtime, settings, tmp_path, receiver, register
):
    await register(receiver.url(), ["appointment.approved"])
    await queue(runtime, demo, 1)
    receiver.delay = 3  # longer than the worker lives
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),  # the server's, with its secrets key
        "DOCTORDESK_WEBHOOK_LEASE_SECONDS": "5",
        "DOCTORDESK_WEBHOOK_TIMEOUT_SECONDS": "1.5",
        "DOCTORDESK_WEBHOOK_POLL_SECONDS": "0.05",
        "DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true",
    }
    worker = processes.launch(["doctordesk", "worker"], env, tmp_path / "worker.log")
    try:
        await until(lambda: bool(receiver.requests()), seconds=60)
    finally:
        worker.kill()  # SIGKILL: no goodbye, the lease stays
        await worker.finished(30)
    [first] = receiver.requests()
    [row] = await rows(runtime)
    assert (row.status, row.attempts) == ("pending", 1)
    receiver.delay = 0
    again = WebhookDispatcher(runtime.db, settings=settings, clock=SystemClock())
    try:
        assert not await again.round()  # the lease holds it
        await until(again.round, seconds=30)  # then it comes due again
    finally:
        await again.close()
    [row] = await rows(runtime)
    assert (row.status, row.attempts) == ("delivered", 2)
    assert [r.webhook_id for r in receiver.requests()] == [first.webhook_id] * 2


async def test_a_running_dispatcher_puts_a_subscriptions_appointment_with_its_headers(
    client, login, demo, runtime, settings, receiver, register
):
    key = await subscriber_key(client, (await login("admin")).headers)
    body = subscription(receiver.url("/ehr/fhir"), "Appointment?status=booked")
    body["channel"]["header"] = ["Authorization: Bearer ehr-token", "X-Clinic: 7"]
    response = await send(client, key.headers, valid(body))
    assert response.status_code == 201, response.text
    await register(receiver.url("/hook"), ["appointment.approved"])  # beside it, an admin's webhook
    a = aid(demo, REQUESTED)
    doctor = await login("doctor1")
    response = await client.post(approve_url(a), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    dispatcher = dispatcher_for(runtime, settings, webhook_poll_seconds=0.05)
    dispatcher.start()
    try:
        await until(lambda: len(receiver.requests()) >= 2)
    finally:
        await dispatcher.stop()
    [put] = receiver.requests(f"/ehr/fhir/Appointment/{a}")
    assert put.method == "PUT" and put.headers["content-type"] == FHIR_JSON
    assert put.headers["authorization"] == "Bearer ehr-token" and put.headers["x-clinic"] == "7"
    assert put.json()["id"] == str(a) and put.json()["status"] == "booked"
    [hook] = receiver.requests("/hook")
    assert hook.method == "POST" and "authorization" not in hook.headers and "x-clinic" not in hook.headers
    assert {r.status for r in await rows(runtime)} == {"delivered"}


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by the openssl command (skips without it)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


async def test_https_endpoints_are_verified_against_the_trusted_certificates(
    runtime, demo, settings, tmp_path, monkeypatch, register
):
    cert, key = self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    receiver = WebhookReceiver().up(tls=tls)
    try:
        await register(receiver.url(), ["appointment.approved"])
        await queue(runtime, demo, 1)
        untrusting = dispatcher_for(runtime, settings)
        try:
            await untrusting.round()
        finally:
            await untrusting.close()
        [row] = await rows(runtime)
        assert receiver.requests() == [] and row.status == "pending" and "certificate" in (row.last_error or "").lower()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the operator trusts the receiver's certificate
        runtime.clock.advance(timedelta(seconds=10))
        trusting = dispatcher_for(runtime, settings)
        try:
            await trusting.drain()
        finally:
            await trusting.close()
    finally:
        receiver.down()
    [got] = receiver.requests()
    assert got.json()["type"] == "appointment.approved"
    assert [(r.status, r.attempts) for r in await rows(runtime)] == [("delivered", 2)]
