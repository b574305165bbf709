"""Two server instances on one PostgreSQL and one Redis: changes, presence and logouts reach streams on the other
instance; without Redis requests keep working, and a reconnected bus makes open streams refresh."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
import redis

from tests.e2e.realtime.test_routing_live import User, approve_one, login, requested_ids
from tests.support import databases
from tests.support.live import LiveServer, free_port
from tests.support.sse import open_stream
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def redis_url() -> str:
    try:
        redis.Redis.from_url(databases.REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        databases.unavailable("Redis", str(exc))
    return databases.REDIS_URL


def postgres_env() -> dict[str, str]:
    url = databases.postgres_url()
    asyncio.run(databases.truncate_postgres(url))
    return {"DOCTORDESK_DATABASE_URL": url, "DOCTORDESK_HEARTBEAT_SECONDS": "0.5"}


@pytest.fixture
def two_instances(tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer]]:
    env = {**postgres_env(), "DOCTORDESK_REDIS_URL": redis_url(), "DOCTORDESK_REDIS_CHANNEL": secrets.token_hex(4)}
    one = LiveServer(tmp_path / "one", extra_env=env)
    two = LiveServer(tmp_path / "two", extra_env=env)
    two.data_dir.mkdir(parents=True)
    one.prepare()
    one.start()
    try:
        two.start()
        try:
            yield one, two
        finally:
            two.stop()
    finally:
        one.stop()


async def test_a_change_through_instance_one_reaches_a_stream_on_instance_two(two_instances) -> None:
    one, two = two_instances
    async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
        doctor_on_1 = await login(h1, "doctor1")
        # The client's screen is PUT through instance 1, its stream is on instance 2 (presence crosses over).
        candidates = requested_ids(await doctor_on_1.put("/profile/appointments", "cross-1"))
        await asyncio.sleep(0.2)
        doctor_on_2 = User(h2, doctor_on_1.token)
        async with open_stream(h2, headers=doctor_on_2.headers("cross-1")) as stream:
            await stream.next()
            decided = await approve_one(doctor_on_1, candidates, "cross-other")
            assert (await stream.next_message(timeout=3)).data == "Timeout"
        # Instance 2 restarts: it never saw the client's PUT, yet routes to it (the screen is kept in Redis).
        await asyncio.to_thread(two.restart)
        async with open_stream(h2, headers=doctor_on_2.headers("cross-1")) as stream:
            await stream.next()
            await approve_one(doctor_on_1, [a for a in candidates if a != decided], "cross-other")
            assert (await stream.next_message(timeout=3)).data == "Timeout"


async def test_a_logout_on_instance_one_closes_the_stream_on_instance_two_within_a_second(two_instances) -> None:
    one, two = two_instances
    async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
        doctor = await login(h1, "doctor1")
        async with open_stream(h2, headers=User(h2, doctor.token).headers("logout-x")) as stream:
            await stream.next()
            started = time.monotonic()
            assert (await h1.post("/auth/logout", headers=doctor.headers("logout-x"))).status_code == 204
            await asyncio.wait_for(stream.closed.wait(), 1.0)
            assert time.monotonic() - started < 1.0
        # And the token no longer works on instance 2 either.
        assert (
            await h2.put("/profile/appointments", headers=User(h2, doctor.token).headers("logout-x"))
        ).status_code == 401


async def test_without_redis_requests_keep_working_and_a_reconnect_refreshes_open_streams(tmp_path: Path) -> None:
    target = urlparse(redis_url())
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 6379)
    await proxy.start()
    db = target.path or "/0"
    env = {
        **await asyncio.to_thread(postgres_env),
        "DOCTORDESK_REDIS_URL": f"redis://127.0.0.1:{proxy.port}{db}",
        "DOCTORDESK_REDIS_CHANNEL": secrets.token_hex(4),
    }
    server = LiveServer(tmp_path / "cut", extra_env=env)
    await asyncio.to_thread(server.prepare)
    await asyncio.to_thread(server.start)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            doctor = await login(http, "doctor1")
            candidates = requested_ids(await doctor.put("/profile/appointments", "cut-1"))
            async with open_stream(http, headers=doctor.headers("cut-1")) as stream:
                await stream.next()
                await proxy.stop()
                # Redis is gone: changes still commit and the local stream still hears of them.
                started = time.monotonic()
                await approve_one(doctor, candidates, "cut-other")
                assert time.monotonic() - started < 3.0
                assert (await stream.next_message()).data == "Timeout"
                ready = (await http.get("/readyz")).json()
                assert ready["status"] == "ok"
                await proxy.start_again()
                # Back: the bus reconnects and every open stream refreshes once (events may have been lost).
                assert (await stream.next_message(timeout=8)).data == "Timeout"
                assert (await http.get("/readyz")).json()["bus"] == "redis-connected"
    finally:
        await asyncio.to_thread(server.stop)
        await proxy.stop()


def test_an_unreachable_redis_does_not_stop_the_server(tmp_path: Path) -> None:
    env = {**postgres_env(), "DOCTORDESK_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    server = LiveServer(tmp_path / "noredis", extra_env=env)
    server.prepare()
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            token = http.post("/auth/login", data={"username": "doctor1", "password": "demo"}).json()["access_token"]
            assert http.put("/profile/appointments", headers={"Authorization": f"Bearer {token}"}).status_code == 200
            assert http.post("/auth/logout", headers={"Authorization": f"Bearer {token}"}).status_code == 204
            assert http.get("/readyz").json()["bus"] == "redis-disconnected"
    finally:
        server.stop()
