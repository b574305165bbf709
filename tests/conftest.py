"""Shared fixtures: settings, databases (SQLite and PostgreSQL from one parameter), the app, seeded data."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.services.passwords import Passwords
from doctordesk.store import seed as seed_module
from tests.support import databases


def pytest_sessionstart(session: pytest.Session) -> None:
    """CI (DOCTORDESK_REQUIRE_SERVICES=1): stop at once, naming them, when PostgreSQL or Redis is missing."""
    missing = databases.required_services_missing()
    if missing:
        pytest.exit("required services are not reachable: " + "; ".join(missing), returncode=3)


# A Monday morning: the demo's relative dates are stable against this clock.
NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The same test on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield databases.sqlite_url(tmp_path, tmp_path_factory.getbasetemp())
        return
    url = databases.postgres_url()
    import asyncio

    asyncio.run(databases.truncate_postgres(url))
    yield url


@pytest.fixture
def settings_factory(tmp_path: Path) -> Callable[..., Settings]:
    def make(database_url: str, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database_url": database_url,
            "data_dir": tmp_path / "data",
            "argon2_time_cost": 1,
            "argon2_memory_kib": 1024,
            "heartbeat_seconds": 1.0,
        }
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
async def app(settings: Settings, clock: FixedClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
def runtime(app: FastAPI) -> Runtime:
    rt: Runtime = app.state.runtime
    return rt


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
async def demo(runtime: Runtime, clock: FixedClock) -> seed_module.Demo:
    """The demo clinic, seeded at the test clock's time."""
    async with runtime.db.transaction() as session:
        return await seed_module.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), clock.now())


@dataclass
class LoggedIn:
    token: str
    user: dict[str, Any]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture
def login(client: httpx.AsyncClient, demo: seed_module.Demo) -> Callable[[str], Any]:
    """``await login("doctor1")`` → a LoggedIn with the bearer headers."""

    async def do(username: str, password: str = "demo") -> LoggedIn:
        response = await client.post("/auth/login", data={"username": username, "password": password})
        assert response.status_code == 200, response.text
        body = response.json()
        return LoggedIn(body["access_token"], body["user"])

    return do


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[Any]:
    """A real server on loopback with the demo clinic, on SQLite (set DOCTORDESK_DATABASE_URL in extra_env to
    change that): ``live_server.url``."""
    from tests.support.live import serving

    with serving(tmp_path / "live") as live:
        yield live
