"""The SSE stream against a real server on loopback: authentication, tickets, heartbeats, headers, recovery with
Last-Event-ID, closing on logout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support.live import LiveServer, serving
from tests.support.sse import open_stream

HEARTBEAT = 0.5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(
        tmp_path_factory.mktemp("stream"),
        DOCTORDESK_HEARTBEAT_SECONDS=str(HEARTBEAT),
        DOCTORDESK_STREAM_TICKET_SECONDS="1",
    ) as live:
        yield live


@pytest.fixture
async def http(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


async def login(http: httpx.AsyncClient, username: str = "doctor1") -> dict[str, str]:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def client_headers(auth: dict[str, str], client_id: str) -> dict[str, str]:
    return {**auth, "X-Client-Id": client_id}


async def test_an_idle_stream_gets_heartbeats_with_ids(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    async with open_stream(http, headers=client_headers(auth, "idle-1")) as stream:
        assert stream.status_code == 200
        started = time.monotonic()
        first = await stream.next()
        beats = [await stream.next(timeout=HEARTBEAT * 4) for _ in range(2)]
        assert all(e.data == "" and e.id for e in [first, *beats])
        assert len({e.id for e in [first, *beats]}) == 3
        assert time.monotonic() - started >= HEARTBEAT * 0.75  # heartbeats come after h/2..h of silence


async def test_the_stream_is_not_buffered_or_cached_and_hints_a_retry(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    async with open_stream(http, headers=client_headers(auth, "headers-1")) as stream:
        await stream.next()
        assert stream.response.headers["content-type"].startswith("text/event-stream")
        assert stream.response.headers["cache-control"] == "no-store"
        assert stream.response.headers["x-accel-buffering"] == "no"
        assert "content-length" not in stream.response.headers
        assert stream.retry == 3000
        # Served ahead of the middleware stack, it still carries the service's security headers.
        assert stream.response.headers["x-content-type-options"] == "nosniff"
        assert "default-src 'none'" in stream.response.headers["content-security-policy"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}],
    ids=["none", "unknown", "not-bearer"],
)
async def test_a_stream_without_a_valid_token_is_401_with_the_error_shape(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    async with open_stream(http, headers={**headers, "X-Client-Id": "anon"}) as stream:
        assert stream.status_code == 401
        assert stream.response.json()["code"] == "UNAUTHORIZED"
        assert stream.response.headers["x-frame-options"] == "DENY"


async def test_a_stream_without_a_client_id_is_422(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    async with open_stream(http, headers=auth) as stream:
        assert stream.status_code == 422
        assert stream.response.json()["code"] == "FIELDS_VALIDATION_ERROR"


async def test_a_ticket_opens_one_stream_and_only_once(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    issued = (await http.post("/profile/stream/ticket", headers=auth)).json()
    assert issued["expires_in"] == 1
    params = {"ticket": issued["ticket"], "client": "ticket-1"}
    async with open_stream(http, params=params) as stream:
        assert stream.status_code == 200
        await stream.next()
    async with open_stream(http, params=params) as again:
        assert again.status_code == 401


async def test_an_expired_ticket_is_refused(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    ticket = (await http.post("/profile/stream/ticket", headers=auth)).json()["ticket"]
    await asyncio.sleep(1.3)
    async with open_stream(http, params={"ticket": ticket, "client": "ticket-2"}) as stream:
        assert stream.status_code == 401


async def test_a_ticket_needs_a_token_and_dies_with_it(http: httpx.AsyncClient) -> None:
    assert (await http.post("/profile/stream/ticket")).status_code == 401
    auth = await login(http)
    ticket = (await http.post("/profile/stream/ticket", headers=auth)).json()["ticket"]
    assert (await http.post("/auth/logout", headers=auth)).status_code == 204
    async with open_stream(http, params={"ticket": ticket, "client": "ticket-3"}) as stream:
        assert stream.status_code == 401


async def test_logout_closes_that_tokens_streams_within_a_second(http: httpx.AsyncClient) -> None:
    mine, other = await login(http), await login(http)
    async with (
        open_stream(http, headers=client_headers(mine, "logout-1")) as stream,
        open_stream(http, headers=client_headers(other, "logout-2")) as survivor,
    ):
        await stream.next()
        await survivor.next()
        started = time.monotonic()
        assert (await http.post("/auth/logout", headers=mine)).status_code == 204
        await asyncio.wait_for(stream.closed.wait(), 1.0)
        assert time.monotonic() - started < 1.0
        assert not survivor.closed.is_set()
        assert (await survivor.next(timeout=HEARTBEAT * 4)).data == ""


async def test_a_malformed_last_event_id_gets_an_immediate_timeout(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    await http.put("/profile/appointments", headers=client_headers(auth, "recover-1"))
    for bad in ["garbage", "-1", "12-x", "9" * 40]:
        headers = {**client_headers(auth, "recover-1"), "Last-Event-ID": bad}
        async with open_stream(http, headers=headers) as stream:
            assert stream.status_code == 200
            assert (await stream.next()).data == "Timeout"


async def test_a_reconnect_that_missed_nothing_gets_no_timeout(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    headers = client_headers(auth, "recover-2")
    await http.put("/profile/appointments", headers=headers)
    async with open_stream(http, headers=headers) as stream:
        last = await stream.next()
    async with open_stream(http, headers={**headers, "Last-Event-ID": last.id or ""}) as stream:
        assert (await stream.next()).data == ""
        assert await stream.quiet(HEARTBEAT * 1.5) == []


async def test_a_fresh_stream_without_last_event_id_starts_quietly(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    async with open_stream(http, headers=client_headers(auth, "fresh-1")) as stream:
        assert (await stream.next()).data == ""


async def test_health_and_readiness_answer(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    ready = await http.get("/readyz")
    assert ready.status_code == 200 and ready.json()["database"] == "ok"


async def test_metrics_count_open_streams(http: httpx.AsyncClient) -> None:
    auth = await login(http)

    def gauge(text: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith("doctordesk_open_streams "))
        return float(line.split()[1])

    before = gauge((await http.get("/metrics")).text)
    async with open_stream(http, headers=client_headers(auth, "metrics-1")) as stream:
        await stream.next()
        assert gauge((await http.get("/metrics")).text) == before + 1
    body: Any = (await http.get("/metrics")).text
    assert "doctordesk_request_seconds_bucket" in body
    assert "doctordesk_push_outbox_depth" in body


async def test_the_stream_is_described_in_the_api_with_its_authentication(http: httpx.AsyncClient) -> None:
    spec = (await http.get("/openapi.json")).json()
    operation = spec["paths"]["/profile/stream"]["get"]
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    assert operation["security"] == [{"HTTPBearer": []}]
    assert {p["name"] for p in operation["parameters"]} >= {"ticket", "client", "x-client-id", "last-event-id"}


def test_metrics_can_require_a_token(tmp_path) -> None:
    live = LiveServer(tmp_path / "metrics", extra_env={"DOCTORDESK_METRICS_TOKEN": "scrape-secret"})
    live.prepare()
    live.start()
    try:
        with httpx.Client(base_url=live.url) as http:
            assert http.get("/metrics").status_code == 401
            assert http.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
            answer = http.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
            assert answer.status_code == 200 and "doctordesk_open_streams" in answer.text
            assert http.get("/healthz").status_code == 200
    finally:
        live.stop()


async def test_a_stream_ticket_is_not_used_up_by_a_refused_client_id(http: httpx.AsyncClient) -> None:
    auth = await login(http)
    ticket = (await http.post("/profile/stream/ticket", headers=auth)).json()["ticket"]
    async with open_stream(http, f"/profile/stream?ticket={ticket}&client=bad%20id") as refused:
        assert refused.status_code == 422
        assert "X-Client-Id" in refused.response.json()["fields"]
    async with open_stream(http, f"/profile/stream?ticket={ticket}&client=ticket-kept") as stream:
        assert stream.status_code == 200


async def test_the_stream_schema_in_the_api_description_matches_the_frames_sent(http: httpx.AsyncClient) -> None:
    operation = (await http.get("/openapi.json")).json()["paths"]["/profile/stream"]["get"]
    content = operation["responses"]["200"]["content"]
    assert list(content) == ["text/event-stream"]
    example = content["text/event-stream"]["example"]
    auth = await login(http)
    request = http.build_request("GET", "/profile/stream", headers=client_headers(auth, "schema-1"))
    response = await http.send(request, stream=True)
    try:
        sent = b""
        async for chunk in response.aiter_bytes():
            sent += chunk
            if sent.endswith(b"\n\n"):
                break
    finally:
        await response.aclose()
    # What the description promises: a retry line once, then id and data lines ended by a blank line.
    lines = sent.decode().split("\n")
    assert lines[0].startswith("retry: ") and lines[1].startswith("id: ") and lines[2].startswith("data:")
    assert lines[3:] == ["", ""]
    assert example.split("\n")[0].startswith("retry: ") and example.split("\n")[1].startswith("id: ")
    assert operation["responses"]["503"] and operation["responses"]["401"] and operation["responses"]["422"]
