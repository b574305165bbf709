"""A real server: deactivating a user closes their open event streams and refuses their token at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.e2e.realtime import test_scale_out
from tests.support.live import LiveServer, serving
from tests.support.sse import open_stream


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("admin-live"), DOCTORDESK_HEARTBEAT_SECONDS="0.5") as live:
        yield live


@pytest.fixture
async def http(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


async def login(http: httpx.AsyncClient, username: str) -> tuple[dict[str, str], int]:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    assert response.status_code == 200, response.text
    body = response.json()
    return {"Authorization": f"Bearer {body['access_token']}"}, body["user"]["id"]


async def test_a_deactivated_users_open_streams_close_and_others_stay_open(http: httpx.AsyncClient) -> None:
    admin, _ = await login(http, "admin")
    doctor, doctor_id = await login(http, "doctor2")
    other, _ = await login(http, "doctor3")
    async with (
        open_stream(http, headers={**doctor, "X-Client-Id": "deact-1"}) as stream,
        open_stream(http, headers={**other, "X-Client-Id": "deact-2"}) as survivor,
    ):
        await stream.next()
        await survivor.next()
        response = await http.post(f"/admin/users/{doctor_id}/deactivate", headers=admin)
        assert response.status_code == 200, response.text
        await asyncio.wait_for(stream.closed.wait(), 3.0)
        assert not survivor.closed.is_set()
        assert (await http.get("/auth/me", headers=doctor)).status_code == 401
        refused = await http.get("/profile/stream", headers={**doctor, "X-Client-Id": "deact-3"})
        assert refused.status_code == 401


two_instances = test_scale_out.two_instances


@pytest.mark.postgres
@pytest.mark.redis
async def test_deactivation_on_one_instance_closes_the_users_stream_on_another(
    two_instances: tuple[LiveServer, LiveServer],
) -> None:
    one, two = two_instances
    async with httpx.AsyncClient(base_url=one.url, timeout=10) as h1, httpx.AsyncClient(base_url=two.url) as h2:
        admin, _ = await login(h1, "admin")
        doctor, doctor_id = await login(h2, "doctor1")
        async with open_stream(h2, headers={**doctor, "X-Client-Id": "deact-far"}) as stream:
            await stream.next()
            assert (await h2.get("/auth/me", headers=doctor)).status_code == 200  # cached on instance two
            assert (await h1.post(f"/admin/users/{doctor_id}/deactivate", headers=admin)).status_code == 200
            await asyncio.wait_for(stream.closed.wait(), 3.0)
            assert (await h2.get("/auth/me", headers=doctor)).status_code == 401
