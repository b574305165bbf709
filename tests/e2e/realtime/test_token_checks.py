"""A stream never outlives its token, also when the bus could not carry the logout: two live instances on one
PostgreSQL and one Redis reached through a proxy that the tests cut (Redis down) or freeze (Redis stops answering),
a stream on instance two, the logout on instance one (docs/realtime.md#closing)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from sqlalchemy import text

from doctordesk.store.db import create_engine
from tests.e2e.realtime.test_routing_live import User, login
from tests.e2e.realtime.test_scale_out import postgres_env, redis_url
from tests.support import databases
from tests.support.live import LiveServer
from tests.support.sse import Stream, open_stream
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

# docs/realtime.md#closing: once Redis answers again, an instance reconnects within its backoff (at most 2 s) and
# re-checks its streams' tokens at once.
AFTER_REDIS_IS_BACK = 3.0


@asynccontextmanager
async def two_instances_behind_a_proxy(
    tmp_path: Path, *, check_seconds: float
) -> AsyncIterator[tuple[TcpProxy, LiveServer, LiveServer]]:
    target = urlparse(redis_url())
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 6379)
    await proxy.start()
    env = {
        **await asyncio.to_thread(postgres_env),
        "DOCTORDESK_REDIS_URL": f"redis://127.0.0.1:{proxy.port}{target.path or '/0'}",
        "DOCTORDESK_REDIS_CHANNEL": secrets.token_hex(4),
        "DOCTORDESK_STREAM_CHECK_SECONDS": str(check_seconds),
    }
    one = LiveServer(tmp_path / "one", extra_env=env)
    two = LiveServer(tmp_path / "two", extra_env=env)
    two.data_dir.mkdir(parents=True)
    await asyncio.to_thread(one.prepare)
    try:
        await asyncio.to_thread(one.start)
        await asyncio.to_thread(two.start)
        yield proxy, one, two
    finally:
        proxy.thaw()
        await asyncio.to_thread(two.stop)
        await asyncio.to_thread(one.stop)
        await proxy.stop()


async def closes_within(stream: Stream, seconds: float) -> float:
    """How long the stream took to end (AssertionError if it is still open after ``seconds``)."""
    started = time.monotonic()
    try:
        await asyncio.wait_for(stream.closed.wait(), seconds)
    except TimeoutError:
        raise AssertionError(f"the stream is still open after {seconds} s") from None
    return time.monotonic() - started


async def test_a_logout_while_redis_is_down_closes_the_stream_on_the_other_instance_once_redis_is_back(
    tmp_path: Path,
) -> None:
    # The periodic check is far away: only the re-check on reconnect can close the stream in time.
    async with two_instances_behind_a_proxy(tmp_path, check_seconds=300) as (proxy, one, two):
        async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
            doctor = await login(h1, "doctor1")
            async with open_stream(h2, headers=User(h2, doctor.token).headers("down-1")) as stream:
                await stream.next()
                await proxy.stop()
                assert (await h1.post("/auth/logout", headers=doctor.headers("down-1"))).status_code == 204
                await asyncio.sleep(1.0)
                assert not stream.closed.is_set()  # the logout could not reach instance two
                await proxy.start_again()
                await closes_within(stream, AFTER_REDIS_IS_BACK)
            assert (await h2.get("/auth/me", headers=User(h2, doctor.token).headers("down-1"))).status_code == 401


async def test_a_logout_while_redis_is_frozen_closes_the_stream_on_the_other_instance_once_redis_answers(
    tmp_path: Path,
) -> None:
    async with two_instances_behind_a_proxy(tmp_path, check_seconds=300) as (proxy, one, two):
        async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
            doctor = await login(h1, "doctor1")
            async with open_stream(h2, headers=User(h2, doctor.token).headers("frozen-1")) as stream:
                await stream.next()
                proxy.freeze()
                started = time.monotonic()
                assert (await h1.post("/auth/logout", headers=doctor.headers("frozen-1"))).status_code == 204
                assert time.monotonic() - started < 2.0  # the publish gives up; the logout is not held
                await asyncio.sleep(4.0)  # long enough for the subscriptions to notice the silence
                proxy.thaw()
                await closes_within(stream, AFTER_REDIS_IS_BACK)


async def test_readiness_reports_a_frozen_redis_as_disconnected_within_its_timeout_and_stays_ready(
    tmp_path: Path,
) -> None:
    async with two_instances_behind_a_proxy(tmp_path, check_seconds=300) as (proxy, _one, two):
        async with httpx.AsyncClient(base_url=two.url, timeout=10) as http:
            assert (await http.get("/readyz")).json()["bus"] == "redis-connected"
            proxy.freeze()
            started = time.monotonic()
            ready = await http.get("/readyz")
            assert time.monotonic() - started < 2.0  # a PING within 1 s, not the subscriber's belief
            assert ready.status_code == 200
            assert {k: ready.json()[k] for k in ("status", "database", "bus")} == {
                "status": "ok",
                "database": "ok",
                "bus": "redis-disconnected",
            }
            proxy.thaw()
            assert (await http.get("/readyz")).json()["bus"] == "redis-connected"


async def test_while_redis_stays_down_revoked_and_deactivated_tokens_lose_their_streams_within_the_check_interval(
    tmp_path: Path,
) -> None:
    async with two_instances_behind_a_proxy(tmp_path, check_seconds=1) as (proxy, one, two):
        async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
            doctor = await login(h1, "doctor1")
            colleague = await login(h1, "doctor2")
            other = await login(h1, "doctor3")
            async with (
                open_stream(h2, headers=User(h2, doctor.token).headers("stay-1")) as revoked,
                open_stream(h2, headers=User(h2, colleague.token).headers("stay-2")) as deactivated,
                open_stream(h2, headers=User(h2, other.token).headers("stay-3")) as untouched,
            ):
                for stream in (revoked, deactivated, untouched):
                    await stream.next()
                await proxy.stop()
                assert (await h1.post("/auth/logout", headers=doctor.headers("stay-1"))).status_code == 204
                engine = create_engine(databases.postgres_url())
                try:
                    async with engine.begin() as conn:
                        await conn.execute(text("UPDATE users SET active = false WHERE username = 'doctor2'"))
                finally:
                    await engine.dispose()
                # Redis stays down: the periodic check (every second here) closes both within its interval.
                await closes_within(revoked, 1.0 + 1.0)
                await closes_within(deactivated, 1.0 + 1.0)
                assert not untouched.closed.is_set()
                assert (await untouched.next(timeout=3)).data == ""  # still served: a heartbeat
