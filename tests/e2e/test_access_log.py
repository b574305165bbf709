"""`doctordesk serve` logs one line per request unless DOCTORDESK_ACCESS_LOG=false turns it off."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer


def log_after_one_request(data_dir: Path, **env: str) -> str:
    server = LiveServer(data_dir, extra_env=env, via_cli=True)
    server.prepare()
    server.start()
    try:
        assert httpx.get(f"{server.url}/healthz?access-log-probe=1", timeout=30).status_code == 200
    finally:
        server.stop()
    return (data_dir / f"server-{server.port}.log").read_text()


@pytest.mark.slow
def test_serve_logs_each_request_by_default(tmp_path):
    assert "access-log-probe" in log_after_one_request(tmp_path / "on")


@pytest.mark.slow
def test_the_access_log_can_be_turned_off(tmp_path):
    log = log_after_one_request(tmp_path / "off", DOCTORDESK_ACCESS_LOG="false")
    assert "Application startup complete" in log  # the server's own log stays
    assert "access-log-probe" not in log
