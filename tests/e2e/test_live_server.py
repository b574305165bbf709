from __future__ import annotations

import signal
import time
from datetime import UTC, datetime, timedelta

import httpx

from doctordesk.cli import SHUTDOWN_GRACE_SECONDS
from doctordesk.client import Client
from doctordesk.screens.protocol import walk
from tests.support.live import LiveServer, serving


def test_a_real_server_serves_the_demo_and_refuses_calls_without_a_token(live_server):
    with httpx.Client(base_url=live_server.url) as http:
        assert http.put("/profile/appointments").status_code == 401
        token = http.post("/auth/login", data={"username": "doctor2", "password": "demo"}).json()["access_token"]
        page = http.put("/profile/appointments", headers={"Authorization": f"Bearer {token}"}).json()
        assert page["screen"] == "appointment-list"
        assert page["elements"][0]["value"] == "Appointments"


async def test_serve_stops_within_its_grace_period_while_a_client_holds_a_stream(tmp_path):
    # `doctordesk serve` with the SDK's stream open: SIGTERM ends the process within the grace period (the open
    # stream no longer holds the shutdown until the supervisor kills it; the client reconnects elsewhere).
    server = LiveServer(tmp_path / "live", extra_env={"DOCTORDESK_HEARTBEAT_SECONDS": "1"}, via_cli=True)
    server.prepare()
    server.start()
    try:
        async with Client(server.url) as doctor:
            await doctor.login("doctor1", "demo")
            await doctor.open("/profile/appointments")
            assert doctor.stream is not None
            await doctor.stream.wait_connected()
            assert server.process is not None
            started = time.monotonic()
            server.process.terminate()
            # uvicorn raises the signal again once it has shut down: the status says "ended by SIGTERM".
            assert await server.process.finished(SHUTDOWN_GRACE_SECONDS + 5) in (0, -signal.SIGTERM)
            assert time.monotonic() - started < SHUTDOWN_GRACE_SECONDS + 3
    finally:
        server.stop()


def test_a_server_started_at_a_moment_runs_its_clock_and_its_demo_from_there(tmp_path):
    # A Saturday afternoon for the server, whatever the machine's clock says: its week view's today is that
    # Saturday and its demo requests lie ahead of it.
    saturday = datetime(2026, 12, 5, 15, 0, tzinfo=UTC)
    with serving(tmp_path / "live", at=saturday) as live:
        assert abs(live.clock.now() - saturday) < timedelta(minutes=5)
        with httpx.Client(base_url=live.url) as http:
            token = http.post("/auth/login", data={"username": "doctor1", "password": "demo"}).json()["access_token"]
            headers = {"Authorization": f"Bearer {token}"}
            week = http.put("/profile/appointments/week", params={"day": "2026-12-05"}, headers=headers).json()
            today = [e["props"]["date"] for e in walk(week["elements"]) if e["type"] == "Day" and e["props"]["today"]]
            assert today == ["2026-12-05"]
            requests = http.get("/api/appointments", params={"status": "requested"}, headers=headers).json()
            starts = [datetime.fromisoformat(a["start"]) for a in requests["appointments"]]
            assert starts and min(starts) > saturday
