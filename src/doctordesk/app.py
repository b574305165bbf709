"""The application factory: builds the database, bus, screens and routers from settings at startup."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI
from sqlalchemy.engine import make_url
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from doctordesk import __version__
from doctordesk.caches.auth import AuthCache, KeyCache
from doctordesk.config import Settings, load_settings
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.clock import Clock
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import bulk
from doctordesk.domain.webhooks import rules as webhooks
from doctordesk.realtime import outbox, relay
from doctordesk.realtime.bus import EventBus
from doctordesk.realtime.hub import Hub
from doctordesk.realtime.lease import DrainLoop
from doctordesk.realtime.shared import SharedBus
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Revisions, ScreenStates
from doctordesk.services.accounts import auth, login_throttle
from doctordesk.services.integration import api_keys
from doctordesk.services.mail import outbox as mail_outbox
from doctordesk.store import private_files
from doctordesk.store.db import Database
from doctordesk.store.secrets import rows as secret_rows
from doctordesk.store.secrets.encryption import SecretKeyError
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
from doctordesk.web.routers.fhir import routes as fhir
from doctordesk.web.routers.integration import read_api as api
from doctordesk.web.routers.integration import routes as integration
from doctordesk.web.routers.smart import consent as smart_consent
from doctordesk.web.routers.smart import launch as smart_launch
from doctordesk.web.routers.smart import oauth as smart_oauth
from doctordesk.web.security import SecurityHeaders
from doctordesk.web.unchanged_polls import UnchangedPolls
from doctordesk.web.webapp import web_app_mount
from doctordesk.workers import wiring as realtime
from doctordesk.workers.token_checks import TokenChecks
from doctordesk.workers.waitlist import build_waitlist_rounds

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
    integration.router,
    smart_oauth.router,
    fhir_bulk.router,  # before the FHIR router, whose catch-all answers every other path under /fhir
    fhir.router,
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


def build_runtime(settings: Settings, *, clock: Clock | None = None, bus: EventBus | None = None) -> Runtime:
    revisions = Revisions()
    hub = Hub(instance=secrets.token_hex(6))
    runtime = Runtime(
        settings=settings,
        db=Database.from_settings(settings),
        bus=bus or realtime.build_bus(settings, hub),
        clock=clock or settings.clock(),
        screens=ScreenStates(revisions, max_age=settings.screen_max_age_seconds),
        auth_cache=AuthCache(ttl=settings.auth_cache_seconds),
        key_cache=KeyCache(ttl=settings.auth_cache_seconds),
        hub=hub,
    )
    hub.clock = runtime.clock.now
    realtime.install(runtime)
    return runtime


def create_app(settings: Settings | None = None, *, clock: Clock | None = None, bus: EventBus | None = None) -> Service:
    settings = settings or load_settings()
    runtime = build_runtime(settings, clock=clock, bus=bus)

    dispatcher = realtime.build_dispatcher(runtime) if settings.push_in_process else None
    token_checks = TokenChecks(runtime, interval=settings.stream_check_seconds)
    waitlist = build_waitlist_rounds(runtime)
    hooks = realtime.build_webhook_dispatcher(runtime) if settings.webhook_in_process else None
    mail = realtime.build_mail_dispatcher(runtime) if settings.mail_in_process else None
    exporter = realtime.build_bulk_exporter(runtime) if settings.bulk_in_process else None
    reminders = realtime.build_reminder_sender(runtime) if settings.reminder_in_process else None
    loops = [loop for loop in (dispatcher, hooks, mail, exporter, reminders, waitlist) if loop is not None]
    _connect_bus_state(runtime, token_checks)
    shared = isinstance(runtime.bus, SharedBus)
    runtime.hub.on_delivered = runtime.metrics.messages_delivered.inc

    async def on_event(event: DomainEvent) -> None:
        runtime.metrics.events_received.inc()
        if not shared:  # a shared bus marks the topics itself, with its own numbers (realtime/shared.py)
            runtime.screens.revisions.bump(event.topics)
        await auth.on_event(runtime, event)
        api_keys.on_event(runtime, event)
        await runtime.hub.on_event(event)
        _wake_loops(event.kind, push=dispatcher, webhook=hooks, mail=mail, bulk_export=exporter)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await _check_data(runtime)
        runtime.bus.subscribe(on_event)
        await runtime.bus.start()
        for loop in loops:
            loop.start()
        heartbeats = asyncio.create_task(runtime.hub.run_heartbeats(settings.heartbeat_seconds))
        stopping = asyncio.Event()
        checks = asyncio.create_task(token_checks.run(), name="stream-token-checks")
        pruning = asyncio.create_task(_prune_login_throttle(runtime, stopping), name="login-throttle-pruning")
        relaying = asyncio.create_task(
            relay.run(runtime.db, runtime.publish, every=settings.relay_seconds, stopping=stopping),
            name="staged-event-relay",
        )
        _tune_collector()
        try:
            yield
        finally:
            heartbeats.cancel()
            # Periodic database work ends after its current round, before the database is disposed of.
            token_checks.stop()
            stopping.set()
            await asyncio.wait({checks, pruning, relaying}, timeout=5.0)
            for task in (checks, pruning, relaying):
                task.cancel()
            runtime.hub.close_all()
            for loop in loops:
                await loop.stop()
            await runtime.bus.stop()
            await runtime.db.dispose()

    app = Service(
        title="doctordesk",
        version=__version__,
        description="Screen-oriented service behind a doctor-facing app. See docs/protocol.md.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
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


def _wake_loops(
    kind: str,
    *,
    push: DrainLoop | None,
    webhook: DrainLoop | None,
    mail: DrainLoop | None,
    bulk_export: DrainLoop | None,
) -> None:
    """Wake the in-process loop an event of ``kind`` queued work for (they poll as well)."""
    if push is not None and kind == outbox.QUEUED_EVENT:
        push.wake()
    if webhook is not None and webhooks.wakes_dispatcher(kind):
        webhook.wake()
    if mail is not None and kind == mail_outbox.QUEUED_EVENT:
        mail.wake()
    if bulk_export is not None and kind == bulk.QUEUED_EVENT:
        bulk_export.wake()


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

    def build_middleware_stack(self) -> ASGIApp:
        runtime = self.state.runtime
        served = HeadAsGet(stream.StreamFastPath(super().build_middleware_stack(), runtime=runtime))
        return UnchangedPolls(served, runtime=runtime)


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


PRUNE_EVERY_SECONDS = 3600.0
log = logging.getLogger(__name__)


async def _check_data(runtime: Runtime) -> None:
    """A secrets key that does not open the stored secrets stops the start, with its reason (SecretKeyError); files
    of the data directory that others may read are named in a warning."""
    settings = runtime.settings
    private_files.warn_wide(settings.data_dir, make_url(settings.database_url).database if settings.is_sqlite else None)
    try:
        await secret_rows.check_keys(runtime.db)
    except SecretKeyError:
        await runtime.db.dispose()
        raise


async def _prune_login_throttle(runtime: Runtime, stopping: asyncio.Event) -> None:
    """Delete login-throttle rows that no longer matter, ``login_prune_delay_seconds`` after the start and then
    hourly until ``stopping`` (every instance: the deletes are idempotent and cheap)."""
    wait = runtime.settings.login_prune_delay_seconds
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await stopping.wait()
        if stopping.is_set():
            return
        wait = PRUNE_EVERY_SECONDS
        try:
            limits = login_throttle.limits(runtime.settings)
            removed = await login_throttle.prune(runtime.db, limits, now=runtime.clock.now())
            if removed:
                log.info("login throttling: pruned %d rows that no longer matter", removed)
        except Exception:  # the database is away or busy: try again at the next round
            log.warning("login throttling: pruning failed; retried in an hour", exc_info=True)


def _connect_bus_state(runtime: Runtime, token_checks: TokenChecks) -> None:
    """A shared bus keeps the screen state in step with the other processes (it adopts the bus's epoch and marks
    on every (re)connection). One that reconnects may have lost events: open streams refresh once, and their
    tokens are re-checked at once (a logout made meanwhile could not reach this instance)."""
    bus = runtime.bus
    if isinstance(bus, SharedBus):
        bus.attach(runtime.screens)

        def on_reconnect() -> None:
            token_checks.wake()
            runtime.hub.timeout_all()

        bus.on_reconnect = on_reconnect
        bus.on_state = lambda connected: runtime.metrics.bus_connected.set(1 if connected else 0)
