"""The application factory: builds the database, bus, screens and routers from settings at startup."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from doctordesk import __version__
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock, SystemClock
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.bus import EventBus, MemoryBus
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Revisions, ScreenStates
from doctordesk.services import auth
from doctordesk.services.auth_cache import AuthCache
from doctordesk.services.passwords import Passwords
from doctordesk.store.db import Database
from doctordesk.web import errors
from doctordesk.web.limits import BodyLimit
from doctordesk.web.routers import api, appointments, review
from doctordesk.web.routers import auth as auth_router
from doctordesk.web.security import SecurityHeaders

STATIC = Path(__file__).parent / "web" / "static"


def build_runtime(settings: Settings, *, clock: Clock | None = None, bus: EventBus | None = None) -> Runtime:
    revisions = Revisions()
    return Runtime(
        settings=settings,
        db=Database(settings.database_url),
        bus=bus or MemoryBus(),
        clock=clock or SystemClock(),
        screens=ScreenStates(revisions, max_age=settings.screen_max_age_seconds),
        auth_cache=AuthCache(ttl=settings.auth_cache_seconds),
    )


def create_app(settings: Settings | None = None, *, clock: Clock | None = None, bus: EventBus | None = None) -> FastAPI:
    settings = settings or Settings()
    runtime = build_runtime(settings, clock=clock, bus=bus)

    async def on_event(event: DomainEvent) -> None:
        runtime.screens.revisions.bump(event.topics)
        await auth.on_event(runtime, event)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runtime.bus.subscribe(on_event)
        await runtime.bus.start()
        try:
            yield
        finally:
            await runtime.bus.stop()
            await runtime.db.dispose()

    app = FastAPI(
        title="doctordesk",
        version=__version__,
        description="Screen-oriented service behind a doctor-facing app. See docs/protocol.md.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.state.passwords = Passwords(time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib)
    errors.install(app)
    app.include_router(auth_router.router)
    app.include_router(appointments.router)
    app.include_router(review.router)
    app.include_router(api.router)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders)
    if STATIC.is_dir():
        app.mount("/", StaticFiles(directory=STATIC, html=True), name="web")
    return app
