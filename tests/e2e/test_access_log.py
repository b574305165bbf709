"""`doctordesk serve` logs one line per request unless DOCTORDESK_ACCESS_LOG=false turns it off, without the secrets
some addresses carry (docs/operations.md#access-log)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer


def log_after_one_request(data_dir: Path, *targets: str, **env: str) -> str:
    server = LiveServer(data_dir, extra_env=env, via_cli=True)
    server.prepare()
    server.start()
    try:
        assert httpx.get(f"{server.url}/healthz?access-log-probe=1", timeout=30).status_code == 200
        for target in targets:
            httpx.get(f"{server.url}{target}", timeout=30)
    finally:
        server.stop()
    return (data_dir / f"server-{server.port}.log").read_text()


@pytest.mark.slow
def test_serve_logs_each_request_by_default_without_the_secrets_of_its_address(tmp_path):
    secrets = [
        "/reminder/reminder-secret-probe",
        "/calendar/feed-secret-probe.ics",
        "/profile/stream?ticket=ticket-secret-probe",
        "/auth/sso/probe/callback?code=code-secret-probe&state=state-secret-probe",
    ]
    log = log_after_one_request(tmp_path / "on", *secrets)
    assert "access-log-probe" in log
    assert "secret-probe" not in log
    for logged in ["/reminder/***", "/calendar/***.ics", "/profile/stream?ticket=***", "code=***&state=***"]:
        assert logged in log


@pytest.mark.slow
def test_the_access_log_can_be_turned_off(tmp_path):
    log = log_after_one_request(tmp_path / "off", DOCTORDESK_ACCESS_LOG="false")
    assert "Application startup complete" in log  # the server's own log stays
    assert "access-log-probe" not in log
