"""Shared fixtures: settings, databases (SQLite and PostgreSQL from one parameter), the app, seeded data."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.store.seed import demo as seed_module
from tests.support import databases
from tests.support.moments import MONDAY_MORNING


def pytest_sessionstart(session: pytest.Session) -> None:
    """CI (DOCTORDESK_REQUIRE_SERVICES=1): stop at once, naming them, when PostgreSQL or Redis is missing (each
    worker prepares its database here; xdist's controller, which runs no tests, only checks the servers)."""
    missing = databases.required_services_missing(prepare=not _is_xdist_controller(session.config))
    if missing:
        pytest.exit("required services are not reachable: " + "; ".join(missing), returncode=3)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Parallel runs (``--dist loadgroup``): the tests of a module that share a module-scoped fixture (a live
    server, a browser) run on one worker, which starts it once; a slow test (minutes of its own) still goes to
    whichever worker is free, starting that fixture there too."""
    for item in items:
        if item.get_closest_marker("slow") or item.get_closest_marker("xdist_group"):
            continue
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(defs and defs[-1].scope == "module" for defs in definitions.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _is_xdist_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", None))


# A Monday morning: the demo's relative dates are stable against this clock.
NOW = MONDAY_MORNING


PREPARED = pytest.StashKey[databases.Prepared]()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same test on SQLite and on PostgreSQL: a migrated, empty database of the test's own. A test that uses
    ``demo`` gets it with the demo clinic already in it (seeded once per worker at the test clock's time and
    copied: docs/development.md), unless its clock or ``demo`` fixture is one of its own."""
    demo_at = _prepared_demo_time(request)
    if request.param == "sqlite":
        url, prepared = databases.sqlite_database(tmp_path, tmp_path_factory.getbasetemp(), demo_at=demo_at)
    else:
        url = databases.postgres_url()
        prepared = databases.reset_postgres(url, demo_at=demo_at)
    if prepared is not None:
        request.node.stash[PREPARED] = prepared
    return url


def _prepared_demo_time(request: pytest.FixtureRequest) -> datetime | None:
    """When the test will ask the ``demo`` fixture below for the demo clinic: the time it seeds it at."""
    if "demo" not in request.fixturenames:
        return None
    definitions = getattr(getattr(request.node, "_fixtureinfo", None), "name2fixturedefs", {})
    if definitions.get("demo") and definitions["demo"][-1].func is not _seeded_demo:
        return None  # a test module's own ``demo``
    test_clock = request.getfixturevalue("clock")
    return test_clock.now() if isinstance(test_clock, FixedClock) else None


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


async def _seeded_demo(request: pytest.FixtureRequest, runtime: Runtime, clock: FixedClock) -> seed_module.Demo:
    """The demo clinic, seeded at the test clock's time."""
    prepared = request.node.stash.get(PREPARED, None)
    if prepared is not None and prepared.url == runtime.settings.database_url and prepared.demo.now == clock.now():
        return prepared.fresh_demo()  # the database was filled with it before the app started
    async with runtime.db.transaction() as session:
        return await seed_module.seed_demo(session, databases.PASSWORDS, clock.now())


demo = pytest.fixture(_seeded_demo, name="demo")


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
