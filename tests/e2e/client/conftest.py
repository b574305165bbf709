"""A real server for the SDK's end-to-end tests, tuned so sync is observable in seconds: the list polls every
second and an unchanged-poll answer is trusted at most one second."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live import LiveServer

FAST_SYNC = {
    "DOCTORDESK_POLL_LIST_SECONDS": "1",
    "DOCTORDESK_POLL_REVIEW_SECONDS": "1",
    "DOCTORDESK_POLL_CHAT_SECONDS": "1",
    "DOCTORDESK_SCREEN_MAX_AGE_SECONDS": "1",
    "DOCTORDESK_HEARTBEAT_SECONDS": "1",
    "DOCTORDESK_SSE_RETRY_MS": "200",
    "DOCTORDESK_CHAT_SEND_PER_MINUTE": "1000",
}


# Screens poll at their default intervals (20-30 s): what arrives within a second came through the stream.
STREAM_ONLY = {
    "DOCTORDESK_HEARTBEAT_SECONDS": "1",
    "DOCTORDESK_SSE_RETRY_MS": "200",
    "DOCTORDESK_POLL_CHAT_SECONDS": "30",
    "DOCTORDESK_CHAT_SEND_PER_MINUTE": "1000",
}


def start_server(data_dir: Path, env: dict[str, str] = FAST_SYNC) -> LiveServer:
    server = LiveServer(data_dir, extra_env=dict(env))
    server.prepare()
    server.start()
    return server


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for a module's tests that do not depend on each other's writes."""
    server = start_server(tmp_path_factory.mktemp("sdk-live"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server of the test's own (restarts, writes)."""
    server = start_server(tmp_path / "live")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def stream_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server of the test's own whose screens poll slowly, so the stream is what keeps them current."""
    server = start_server(tmp_path / "live", STREAM_ONLY)
    try:
        yield server
    finally:
        server.stop()
