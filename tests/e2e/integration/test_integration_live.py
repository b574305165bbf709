"""The integration API against a real server: a request created through it reaches the doctor's open stream at
once, and the curl walkthrough of docs/integration.md runs as written."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer, serving
from tests.support.sse import open_stream
from tests.support.walkthrough import run_walkthrough

DOC = Path(__file__).parents[3] / "docs" / "integration.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("integration"), DOCTORDESK_HEARTBEAT_SECONDS="0.5") as live:
        yield live


@pytest.fixture
async def http(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


async def token(http: httpx.AsyncClient, username: str) -> str:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    return str(response.json()["access_token"])


async def test_a_request_through_the_api_reaches_the_doctors_open_list_at_once(http: httpx.AsyncClient) -> None:
    admin = {"Authorization": f"Bearer {await token(http, 'admin')}"}
    account = (await http.post("/admin/service-accounts", headers=admin, json={"name": "live-booking"})).json()
    key = (
        await http.post(
            f"/admin/service-accounts/{account['id']}/keys", headers=admin, json={"scopes": ["appointments:write"]}
        )
    ).json()["key"]
    api = {"X-Api-Key": key}
    doctor = {"Authorization": f"Bearer {await token(http, 'doctor1')}", "X-Client-Id": "doctor-list"}
    page = (await http.put("/profile/appointments", headers=doctor)).json()
    me = 1  # doctor1 in the demo
    free = (
        await http.get(
            "/integration/v1/free-times",
            headers=api,
            params={"doctor": me, "location": 1, "from": day(0), "to": day(7)},
        )
    ).json()["free"]
    async with open_stream(http, headers=doctor) as stream:
        await stream.next()
        created = await http.post(
            "/integration/v1/appointment-requests",
            headers=api,
            json={"patient": 1, "doctor": me, "location": 1, "start": free[0]["start"]},
        )
        assert created.status_code == 201, created.text
        assert (await stream.next_message()).data == "Timeout"
    update = await http.patch("/profile/appointments", headers={**doctor, "X-Screen-State": page["state"]})
    assert f"appointment-{created.json()['id']}" in update.text


def day(days: int) -> str:
    """A day from today (UTC), ISO."""
    return (datetime.now(UTC) + timedelta(days=days)).date().isoformat()


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_curl_walkthrough_runs_as_written(server: LiveServer) -> None:
    result = run_walkthrough(DOC, server.url, min_curls=10)
    assert result.returncode == 0, result.stdout + result.stderr
