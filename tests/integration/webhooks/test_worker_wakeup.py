"""A ``doctordesk worker`` is woken through Redis when a server queues deliveries (SQLite and PostgreSQL, real
Redis, a real receiver on loopback): it delivers at once, not at its next poll."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable

import pytest
import redis.asyncio as redis

from doctordesk.config import Settings
from tests.support import databases, processes
from tests.support.review import REQUESTED, aid, approve_url

pytestmark = pytest.mark.redis

POLL_SECONDS = 30


@pytest.fixture
def channel() -> str:
    return f"wake-{secrets.token_hex(4)}"


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings], channel: str) -> Settings:
    return settings_factory(
        database_url,
        webhook_in_process=False,
        webhook_allow_private_addresses=True,
        redis_url=databases.redis_url(),
        redis_channel=channel,
    )


async def subscribers(channel: str) -> int:
    client = redis.Redis.from_url(databases.redis_url())
    try:
        [(_, count)] = await client.pubsub_numsub(f"{channel}:events")
        return int(count)
    finally:
        await client.aclose()


async def test_the_worker_delivers_as_soon_as_the_server_queued_not_at_its_next_poll(
    client, login, demo, database_url, settings, channel, tmp_path, receiver, register
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),  # the server's, with its secrets key
        "DOCTORDESK_REDIS_URL": databases.redis_url(),
        "DOCTORDESK_REDIS_CHANNEL": channel,
        "DOCTORDESK_WEBHOOK_POLL_SECONDS": str(POLL_SECONDS),
        "DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true",
    }
    worker = processes.launch(["doctordesk", "worker"], env, tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 60
        while await subscribers(channel) < 2:  # the server's bus and the worker's
            assert time.monotonic() < deadline, "the worker did not subscribe"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)  # its first look found nothing; the next poll is 30 s away
        doctor = await login("doctor1")
        response = await client.post(approve_url(aid(demo, REQUESTED)), headers=doctor.headers, data={"version": "1"})
        assert response.status_code == 200, response.text
        started = time.monotonic()
        while not receiver.requests():
            assert time.monotonic() - started < POLL_SECONDS / 3, "not woken"
            await asyncio.sleep(0.02)
    finally:
        worker.terminate()
        assert await worker.finished(30) == 0, (tmp_path / "worker.log").read_text()  # stopped cleanly
    [got] = receiver.requests()
    assert got.verified(endpoint["secret"])["type"] == "appointment.approved"
