"""The application factory: routers, middleware and the lifespan around what ``bootstrap.py`` assembles (the
runtime and the background tasks of a serving process)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from doctordesk import __version__, bootstrap
from doctordesk.config import Settings, load_settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.clock import Clock
from doctordesk.realtime.bus import EventBus
from doctordesk.realtime.metrics import CollectorPauses
from doctordesk.web import errors, responses, route_table
from doctordesk.web.head_requests import HeadAsGet
from doctordesk.web.language import Language
from doctordesk.web.limits import BodyLimit
from doctordesk.web.observability import RequestTimer
from doctordesk.web.routers import (
    appointments,
    booking,
    calendar,
    chat,
    dashboard,
    language,
    mfa,
    ops,
    review,
    security,
    sso,
    stream,
    waitlist,
)
from doctordesk.web.routers import auth as auth_router
from doctordesk.web.routers import reminders as reminder_links
from doctordesk.web.routers.admin import audit as admin_audit
from doctordesk.web.routers.admin import clinic as admin_clinic
from doctordesk.web.routers.admin import data_screens as admin_data_screens
from doctordesk.web.routers.admin import fees as admin_fees
from doctordesk.web.routers.admin import hours as admin_hours
from doctordesk.web.routers.admin import locations as admin_locations
from doctordesk.web.routers.admin import policies as admin_policies
from doctordesk.web.routers.admin import screens as admin_screens
from doctordesk.web.routers.admin import service_accounts as admin_service_accounts
from doctordesk.web.routers.admin import sign_in as admin_sign_in
from doctordesk.web.routers.admin import smart_apps as admin_smart_apps
from doctordesk.web.routers.admin import smart_screens as admin_smart_screens
from doctordesk.web.routers.admin import sso_screens as admin_sso_screens
from doctordesk.web.routers.admin import users as admin_users
from doctordesk.web.routers.admin import webhooks as webhooks_admin
from doctordesk.web.routers.fhir import bulk as fhir_bulk
from doctordesk.web.routers.fhir import routes as fhir_routes
from doctordesk.web.routers.integration import read_api as api
from doctordesk.web.routers.integration import routes as integration_routes
from doctordesk.web.routers.smart import consent as smart_consent
from doctordesk.web.routers.smart import launch as smart_launch
from doctordesk.web.routers.smart import oauth as smart_oauth
from doctordesk.web.security import SecurityHeaders
from doctordesk.web.unchanged_polls import UnchangedPolls
from doctordesk.web.webapp import web_app_mount

STATIC = Path(__file__).parent / "web" / "static"

# The routers, in the order their routes are tried (the web app's files come after them all).
ROUTERS: tuple[APIRouter, ...] = (
    auth_router.router,
    mfa.router,
    sso.router,
    appointments.router,
    booking.router,
    waitlist.router,
    review.router,
    api.router,
    admin_service_accounts.router,
    integration_routes.router,
    smart_oauth.router,
    fhir_bulk.router,  # before the FHIR router, whose catch-all answers every other path under /fhir
    fhir_routes.router,
    smart_consent.router,
    smart_launch.router,
    security.router,
    admin_smart_apps.router,
    chat.router,
    stream.router,
    stream.endpoints_router,
    ops.router,
    admin_users.router,
    admin_sign_in.router,
    admin_locations.router,
    admin_audit.router,
    admin_hours.router,
    admin_fees.router,
    admin_policies.router,
    webhooks_admin.router,
    admin_screens.router,
    admin_data_screens.router,
    admin_smart_screens.router,
    admin_sso_screens.router,
    dashboard.router,
    calendar.feed_router,
    calendar.router,
    reminder_links.router,
    admin_clinic.router,
    language.router,
)


def create_app(settings: Settings | None = None, *, clock: Clock | None = None, bus: EventBus | None = None) -> Service:
    """The app of one serving process: its runtime and background tasks come from ``bootstrap.assemble`` (built
    now, started and stopped by the lifespan)."""
    settings = settings or load_settings()
    assembly = bootstrap.assemble(settings, clock=clock, bus=bus)
    runtime = assembly.runtime

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await assembly.start()
        _tune_collector()
        pauses = CollectorPauses(runtime.metrics)
        gc.callbacks.append(pauses)
        try:
            yield
        finally:
            gc.callbacks.remove(pauses)
            await assembly.stop()

    app = Service(
        title="doctordesk",
        version=__version__,
        description="Screen-oriented service behind a doctor-facing app. See docs/protocol.md.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.state.assembly = assembly
    app.state.passwords = Passwords(time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib)
    errors.install(app)
    responses.install_openapi(app)
    for router in ROUTERS:
        route_table.add_routes(app, router)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestTimer, metrics=runtime.metrics)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(Language)
    if STATIC.is_dir():
        app.router.routes.append(web_app_mount(STATIC))
    app.index_routes()
    return app


def _declare_coroutine_function(method: Callable[..., Any]) -> None:
    """Servers tell an ASGI 3 app by its ``__call__`` being a coroutine function (uvicorn's ``--interface auto``);
    ``Service.__call__`` returns the coroutine of whichever call serves the request, so it says so itself."""
    if sys.version_info >= (3, 12):
        inspect.markcoroutinefunction(method)
    else:
        method._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]


class Service(FastAPI):
    """The app: FastAPI with its routes behind one index (``web/route_table.py``), and the event stream and
    unchanged polls served ahead of its middleware stack (``stream.StreamFastPath``, ``web/unchanged_polls.py``), and
    HEAD served as GET without the body for every GET route (``web/head_requests.py``)."""

    @property
    def routes(self) -> list[BaseRoute]:
        """Every route, those behind the index included (the API description reads them). A copy: routes are added
        through the app's decorators or ``app.router``."""
        return route_table.listed(self.router.routes)

    def index_routes(self) -> None:
        """Put every route of the app's router behind one index (again, when routes were added since)."""
        self.router.routes[:] = [route_table.RouteIndex(self.routes)]

    _streams: stream.StreamFastPath | None = None

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Coroutine[Any, Any, None]:
        """A stream's request goes straight to ``StreamFastPath.serve``: not a coroutine itself, so an open stream
        keeps no frame of this app's, FastAPI's or Starlette's call, nor of the layers in front (tens of thousands
        are open at once). Every other request is the app's as usual."""
        streams = self._streams
        if streams is not None and streams.serves(scope):
            return streams.serve(scope, receive, send)
        return super().__call__(scope, receive, send)

    _declare_coroutine_function(__call__)

    def build_middleware_stack(self) -> ASGIApp:
        runtime = self.state.runtime
        self._streams = stream.StreamFastPath(super().build_middleware_stack(), runtime=runtime)
        return UnchangedPolls(HeadAsGet(self._streams), runtime=runtime)


# The collector's full pass runs after this many passes over the middle generation (CPython's default: 10).
FULL_COLLECTION_EVERY = 1000
_TUNED: list[bool] = []


def _tune_collector() -> None:
    """Keep the cyclic collector's full passes rare: they walk every live object (thousands of open streams make
    that a 100-250 ms pause that finds nothing to free), and they stall every stream and request meanwhile.
    Startup objects live as long as the process: frozen out of those passes at once. Young garbage is still
    collected as usual; garbage that dies old waits longer for a full pass. Once per process (tests start many
    apps in one)."""
    if not _TUNED:
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
        _TUNED.append(True)
