"""`doctordesk serve` behind a proxy: the client address that login throttling counts comes from X-Forwarded-For
only on connections from a trusted proxy (DOCTORDESK_FORWARDED_ALLOW_IPS), never from any client that sends it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer

FAILURES = 5  # DOCTORDESK_LOGIN_MAX_FAILURES's default


def fail_logins(http: httpx.Client, forwarded_for: str) -> None:
    for _ in range(FAILURES):
        answer = http.post(
            "/auth/login", data={"username": "doctor1", "password": "guess"}, headers={"X-Forwarded-For": forwarded_for}
        )
        assert answer.status_code == 401, answer.text


def log_in(http: httpx.Client, forwarded_for: str) -> int:
    answer = http.post(
        "/auth/login", data={"username": "doctor1", "password": "demo"}, headers={"X-Forwarded-For": forwarded_for}
    )
    return answer.status_code


def serve(data_dir: Path, **env: str) -> LiveServer:
    server = LiveServer(data_dir, extra_env=env, via_cli=True)
    server.prepare()
    return server.start()


@pytest.mark.slow
def test_behind_a_trusted_proxy_each_forwarded_client_is_counted_on_its_own(tmp_path):
    server = serve(tmp_path / "proxied")  # the proxy on this host: loopback is trusted by default
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            fail_logins(http, "203.0.113.9")
            assert log_in(http, "203.0.113.9") == 429
            assert log_in(http, "198.51.100.20") == 200
            # The proxy appends the address it saw to whatever the client sent: the client cannot pick another.
            assert log_in(http, "198.51.100.20, 203.0.113.9") == 429
    finally:
        server.stop()


@pytest.mark.slow
def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(tmp_path):
    server = serve(tmp_path / "direct", DOCTORDESK_FORWARDED_ALLOW_IPS="")
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            fail_logins(http, "203.0.113.9")
            # Every request came from this host's address, whatever the header says: that address is locked out.
            assert log_in(http, "198.51.100.20") == 429
    finally:
        server.stop()
