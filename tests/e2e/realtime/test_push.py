"""Push through a real partner on loopback (the Gorush contract): failures and an outage are retried, an
unregistered token is removed, every notification arrives exactly once, and a restart loses nothing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import processes
from tests.support.live import LiveServer
from tests.support.push_stub import PushStub

FAST_RETRIES = {
    "DOCTORDESK_PUSH_BACKOFF_SECONDS": "0.05",
    "DOCTORDESK_PUSH_BACKOFF_MAX_SECONDS": "0.5",
    "DOCTORDESK_PUSH_POLL_SECONDS": "0.2",
    "DOCTORDESK_PUSH_LEASE_SECONDS": "5",
}
# Two phones of patient1: the old one's token is no longer registered with the platform.
PHONES = [
    ("patient1", "phone-1", "android", "tok-1"),
    ("patient1", "phone-1-old", "ios", "bad-token-1"),
    ("patient2", "phone-2", "ios", "tok-2"),
    ("patient3", "phone-3", "android", "tok-3"),
]


@pytest.fixture
def stub() -> Iterator[PushStub]:
    partner = PushStub()
    partner.up()
    try:
        yield partner
    finally:
        partner.down()


def outbox(server: LiveServer) -> list[tuple[str, str, str]]:
    with sqlite3.connect(server.data_dir / "doctordesk.db") as db:
        return db.execute("SELECT notification_id, status, data FROM push_outbox ORDER BY id").fetchall()


def device_tokens(server: LiveServer) -> dict[str, str | None]:
    with sqlite3.connect(server.data_dir / "doctordesk.db") as db:
        return dict(db.execute("SELECT device_key, push_token FROM devices").fetchall())


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def register_phones(http: httpx.Client) -> None:
    """Each patient's app makes a call with its push headers (device id, platform, current token)."""
    for patient, device, platform, token in PHONES:
        auth = http.post("/auth/login", data={"username": patient, "password": "demo"}).json()["access_token"]
        headers = {
            "Authorization": f"Bearer {auth}",
            "X-Device-Id": device,
            "X-Push-Platform": platform,
            "X-Push-Token": token,
        }
        assert http.put("/profile/appointments", headers=headers).status_code == 200


def approve_all_requested(http: httpx.Client) -> int:
    """doctor1 approves every request that can be approved as proposed; how many were."""
    token = http.post("/auth/login", data={"username": "doctor1", "password": "demo"}).json()["access_token"]
    auth = {"Authorization": f"Bearer {token}"}
    page = http.put("/profile/appointments", headers=auth).json()
    ids = []
    stack = list(page["elements"])
    while stack:
        e = stack.pop()
        stack.extend(e.get("children", []))
        if e["id"].startswith("status-") and e.get("props", {}).get("code") == 1:
            ids.append(int(e["id"].split("-", 1)[1]))
    approved = 0
    for a in sorted(ids):
        review = http.put(f"/profile/appointments/{a}/approve", headers=auth).json()
        stack = list(review["elements"])
        version = None
        while stack:
            e = stack.pop()
            stack.extend(e.get("children", []))
            if e["id"] == "version":
                version = e["value"]
        response = http.post(f"/profile/appointments/{a}/approve", headers=auth, data={"version": version})
        approved += response.status_code == 200
    return approved


def test_every_notification_arrives_exactly_once_through_failures_an_outage_and_an_invalid_token(
    tmp_path: Path, stub: PushStub
) -> None:
    stub.invalid_tokens.add("bad-token-1")
    server = LiveServer(tmp_path / "push", extra_env={**FAST_RETRIES, "DOCTORDESK_PUSH_URL": stub.url})
    server.prepare()
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            register_phones(http)
            stub.fail_next(2, status=503, retry_after="0")
            stub.fail_next(1, status=429, retry_after="1")
            assert approve_all_requested(http) >= 2
            wait_for(lambda: stub.requests >= 3, 10)
            stub.down()  # the partner is gone for a while
            time.sleep(1.5)
            stub.up()
            wait_for(lambda: all(status != "pending" for _, status, _ in outbox(server)), 20)
        rows = outbox(server)
        sent = {nid for nid, status, _ in rows if status == "sent"}
        dropped = {nid for nid, status, _ in rows if status == "dropped"}
        assert sent and dropped, rows
        assert stub.counts() == dict.fromkeys(sent, 1)  # each accepted once; none of the dropped
        assert stub.malformed == []
        assert device_tokens(server)["phone-1-old"] is None  # the unregistered token was removed
        assert device_tokens(server)["phone-1"] == "tok-1"
        assert all(data == "Timeout" for _, _, data in rows)
    finally:
        server.stop()


def test_a_restart_between_commit_and_delivery_loses_nothing(tmp_path: Path, stub: PushStub) -> None:
    env = {**FAST_RETRIES, "DOCTORDESK_PUSH_URL": stub.url, "DOCTORDESK_PUSH_IN_PROCESS": "false"}
    server = LiveServer(tmp_path / "restart", extra_env=env)
    server.prepare()
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            register_phones(http)
            assert approve_all_requested(http) >= 2
        server.stop()  # committed, not delivered: the server is gone
        pending = outbox(server)
        assert pending and all(status == "pending" for _, status, _ in pending)
        assert stub.counts() == {}
        # A separate worker process (as in production scale-out) delivers what the server committed.
        log = tmp_path / "worker.log"
        worker = processes.launch(["doctordesk", "worker"], server.env, log)
        try:
            wait_for(lambda: all(status != "pending" for _, status, _ in outbox(server)), 20)
        finally:
            worker.terminate()
            assert worker.wait(10) == 0, log.read_text()
        assert stub.counts() == dict.fromkeys((nid for nid, _, _ in pending), 1)
    finally:
        server.stop()
