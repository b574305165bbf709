"""Operations endpoints: /metrics closed by default (loopback only, or the metrics token), /readyz, on SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from doctordesk.app import create_app
from doctordesk.web.routers.ops import is_loopback
from tests.support.errors import assert_error


async def client_at(app, host: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(host, 40000)), base_url="http://t")


@pytest.fixture
async def with_token(database_url, settings_factory, clock) -> AsyncIterator[object]:
    application = create_app(settings_factory(database_url, metrics_token="scrape-secret-1"), clock=clock)
    async with application.router.lifespan_context(application):
        yield application


async def test_without_a_metrics_token_metrics_answer_only_clients_on_this_host(app):
    for host in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        async with await client_at(app, host) as local:
            answer = await local.get("/metrics")
            assert answer.status_code == 200 and "doctordesk_open_streams" in answer.text
    for host in ("203.0.113.7", "10.0.0.5", "2001:db8::1"):
        async with await client_at(app, host) as remote:
            answer = await remote.get("/metrics")
            assert_error(answer, 403, "FORBIDDEN")
            assert "doctordesk_open_streams" not in answer.text


async def test_with_a_metrics_token_everyone_needs_it_loopback_too(with_token):
    for host in ("127.0.0.1", "203.0.113.7"):
        async with await client_at(with_token, host) as http:
            assert_error(await http.get("/metrics"), 401, "UNAUTHORIZED")
            assert_error(await http.get("/metrics", headers={"Authorization": "Bearer wrong"}), 401, "UNAUTHORIZED")
            answer = await http.get("/metrics", headers={"Authorization": "Bearer scrape-secret-1"})
            assert answer.status_code == 200 and "doctordesk_open_streams" in answer.text


def test_only_loopback_addresses_count_as_this_host():
    assert is_loopback("127.0.0.1") and is_loopback("127.8.9.10") and is_loopback("::1")
    assert is_loopback("::ffff:127.0.0.1")
    assert not any(is_loopback(h) for h in (None, "", "localhost", "10.0.0.1", "::ffff:10.0.0.1", "/run/app.sock"))


async def test_readiness_reports_the_database_and_the_in_process_bus(client):
    answer = await client.get("/readyz")
    assert answer.status_code == 200
    body = answer.json()
    assert body == {"status": "ok", "database": "ok", "bus": "memory", "instance": body["instance"]}
    assert len(body["instance"]) == 12
