"""The composition root: one place builds what a process runs — the runtime (database, bus, hub, caches), the
transaction hooks (the push, webhook and mail outboxes), the event fan-out, and the background tasks, all from one
registry (``REGISTRY``: a name, a builder, where it runs, what wakes it). ``serve`` (the app's lifespan) and
``doctordesk worker`` both run an ``Assembly``; nothing here runs at import time (docs/architecture.md#assembly).

Where a task runs: a serving process runs every task of the registry but those whose ``*_in_process`` setting is
off; ``doctordesk worker`` runs every task that has such a setting (the servers turn theirs off when workers take
them over). Tasks without one (stream heartbeats and token checks, login-throttle pruning, the staged-event relay)
belong to the serving processes."""

from __future__ import annotations

import enum
import logging
import secrets
from collections.abc import Callable, Collection
from dataclasses import dataclass

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.caches.auth import AuthCache, KeyCache
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import bulk
from doctordesk.domain.webhooks import rules as webhook_rules
from doctordesk.realtime import outbox, presence, relay
from doctordesk.realtime.bus import EventBus, MemoryBus
from doctordesk.realtime.hub import Hub
from doctordesk.realtime.message import TIMEOUT_ONLY
from doctordesk.realtime.push import make_adapter, push_enabled
from doctordesk.realtime.redis_bus import RedisBus
from doctordesk.realtime.routing import message_for
from doctordesk.realtime.shared import SharedBus
from doctordesk.realtime.socket_bus import SocketBus
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Revisions, ScreenStates
from doctordesk.services.accounts import auth
from doctordesk.services.integration import api_keys
from doctordesk.services.mail import outbox as mail_outbox
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.store import private_files
from doctordesk.store.db import Database, default_pool_size
from doctordesk.store.secrets import rows as secret_rows
from doctordesk.store.secrets.encryption import SecretKeyError
from doctordesk.workers import waitlist
from doctordesk.workers.background import Periodic, Running, Task
from doctordesk.workers.bulk_exporter import BulkExporter
from doctordesk.workers.login_pruning import prune_login_throttle
from doctordesk.workers.mail_dispatcher import MailDispatcher
from doctordesk.workers.push_dispatcher import Dispatcher
from doctordesk.workers.reminders import ReminderSender
from doctordesk.workers.token_checks import TokenChecks
from doctordesk.workers.webhook_dispatcher import WebhookDispatcher

log = logging.getLogger(__name__)


class Role(enum.Enum):
    """What a process is: a server (``serve``, the app) or a ``doctordesk worker``."""

    SERVE = "serve"
    WORKER = "worker"


# --- the background tasks -------------------------------------------------------------------------------------


def build_dispatcher(rt: Runtime) -> Dispatcher | None:
    """The push dispatcher for this runtime's settings; None when no partner is configured."""
    s = rt.settings
    adapter = make_adapter(s.push_adapter, s.push_url, s.push_credentials)
    if adapter is None:
        return None
    return Dispatcher(rt.db, adapter, settings=s, clock=rt.clock, metrics=rt.metrics)


def build_webhook_dispatcher(rt: Runtime) -> WebhookDispatcher:
    """The webhook dispatcher for this runtime (scheduling on the runtime's clock)."""
    return WebhookDispatcher(rt.db, settings=rt.settings, clock=rt.clock)


def build_mail_dispatcher(rt: Runtime) -> MailDispatcher | None:
    """The mail sender for this runtime (a mail's new state is published: open Mail screens follow it); None (said
    once in the log) when no SMTP relay is configured."""
    if not rt.settings.smtp_url:
        log.info("no SMTP relay (DOCTORDESK_SMTP_URL): patients are not sent email")
        return None
    return MailDispatcher(rt.db, settings=rt.settings, clock=rt.clock, on_changed=rt.publish)


def build_bulk_exporter(rt: Runtime) -> BulkExporter:
    """The FHIR bulk exporter for this runtime (docs/fhir.md#bulk-export)."""
    return BulkExporter(rt.db, settings=rt.settings, clock=rt.clock)


def build_reminder_sender(rt: Runtime) -> ReminderSender | None:
    """The reminder sender for this runtime (what it queues is published: it wakes the mail and push senders);
    None when there is no way to reach a patient (no SMTP relay, no push partner): a reminder is recorded as sent
    only when it could go."""
    if not reminders_reach_patients(rt.settings):
        log.info("no SMTP relay and no push partner: patients are not sent reminders")
        return None
    return ReminderSender(rt.db, settings=rt.settings, clock=rt.clock, on_queued=rt.publish)


def reminders_reach_patients(settings: Settings) -> bool:
    """A relay or a push partner is configured (as ``build_mail_dispatcher`` and ``make_adapter`` read them)."""
    return bool(settings.smtp_url) or push_enabled(settings.push_adapter, settings.push_url)


def build_waitlist_rounds(rt: Runtime) -> waitlist.WaitlistRounds:
    """The waitlist's rounds (docs/waitlist.md)."""
    return waitlist.WaitlistRounds(rt, interval=rt.settings.waitlist_check_seconds)


def build_token_checks(rt: Runtime) -> Periodic:
    """Every open stream's token re-checked every ``stream_check_seconds`` (and when woken: the bus reconnected)."""
    checks = TokenChecks(rt, interval=rt.settings.stream_check_seconds)
    return Periodic("stream-token-checks", lambda _stopping: checks.run(), on_stop=checks.stop, on_wake=checks.wake)


def build_login_pruning(rt: Runtime) -> Periodic:
    """Stale login-throttle rows deleted (``workers/login_pruning.py``)."""
    return Periodic("login-throttle-pruning", lambda stopping: prune_login_throttle(rt, stopping))


def build_relay(rt: Runtime) -> Periodic:
    """Events staged by processes without the bus, published on this one's (``realtime/relay.py``)."""
    every = rt.settings.relay_seconds
    return Periodic("staged-event-relay", lambda stopping: relay.run(rt.db, rt.publish, every=every, stopping=stopping))


def build_heartbeats(rt: Runtime) -> Periodic:
    """Heartbeats on every open stream; stopping it closes the streams still open."""
    interval = rt.settings.heartbeat_seconds
    return Periodic("stream-heartbeats", lambda _s: rt.hub.run_heartbeats(interval), grace=0, after=rt.hub.close_all)


def _never(_event: DomainEvent) -> bool:
    return False


def _kind(kind: str) -> Callable[[DomainEvent], bool]:
    return lambda event: event.kind == kind


@dataclass(frozen=True)
class Job:
    """One background task of the registry: its name (its asyncio task's), how a runtime builds it (None: not
    configured here, e.g. no SMTP relay), the setting that keeps it inside ``serve`` (None: it belongs to the
    serving processes alone), and which events wake it (it polls as well)."""

    name: str
    build: Callable[[Runtime], Task | None]
    in_process: str | None = None
    wakes: Callable[[DomainEvent], bool] = _never

    def runs_in(self, role: Role, settings: Settings) -> bool:
        if role is Role.WORKER:
            return self.in_process is not None
        return self.in_process is None or bool(getattr(settings, self.in_process))


# In the order they start (they are told to stop together). The reminders and the waitlist's rounds come first: what
# they queue is sent by the dispatchers after them in the same pass of ``doctordesk worker --once``.
REGISTRY: tuple[Job, ...] = (
    Job("reminder-sender", build_reminder_sender, "reminder_in_process"),
    Job("waitlist-rounds", build_waitlist_rounds, "waitlist_in_process", wakes=waitlist.wakes),
    Job("push-dispatcher", build_dispatcher, "push_in_process", wakes=_kind(outbox.QUEUED_EVENT)),
    Job(
        "webhook-dispatcher",
        build_webhook_dispatcher,
        "webhook_in_process",
        wakes=lambda event: webhook_rules.wakes_dispatcher(event.kind),
    ),
    Job("mail-dispatcher", build_mail_dispatcher, "mail_in_process", wakes=_kind(mail_outbox.QUEUED_EVENT)),
    Job("bulk-exporter", build_bulk_exporter, "bulk_in_process", wakes=_kind(bulk.QUEUED_EVENT)),
    Job("stream-token-checks", build_token_checks),
    Job("login-throttle-pruning", build_login_pruning),
    Job("staged-event-relay", build_relay),
    Job("stream-heartbeats", build_heartbeats),
)


def jobs_for(role: Role, settings: Settings, registry: tuple[Job, ...] = REGISTRY) -> list[Job]:
    """The registry's jobs a process of ``role`` runs with ``settings``."""
    return [job for job in registry if job.runs_in(role, settings)]


def build_tasks(rt: Runtime, jobs: list[Job]) -> Running:
    """The tasks of ``jobs`` this runtime can run (those configured), not yet started."""
    built = [(job.build(rt), job.wakes) for job in jobs]
    return Running([(task, wakes) for task, wakes in built if task is not None])


# --- the runtime ----------------------------------------------------------------------------------------------


def poll_renders(settings: Settings) -> int:
    """How many polls of one process render at once: the setting, else half the database pool (at least 2), so the
    requests a person waits for (a page, a send, an action) find connections and the loop free in a burst of polls."""
    return settings.poll_renders or max(2, (settings.db_pool_size or default_pool_size()) // 2)


def build_bus(settings: Settings, hub: Hub, *, role: Role = Role.SERVE) -> EventBus:
    """The Redis bus when ``DOCTORDESK_REDIS_URL`` is set, else the Unix-socket bus of ``serve --workers N``
    (``DOCTORDESK_BUS_SOCKET``; servers only), else the in-process bus. A worker without Redis shares no bus with
    the servers: its loops find new work by polling (and by what it queues itself)."""
    if settings.redis_url:
        return RedisBus(settings.redis_url, channel=settings.redis_channel, instance=hub.instance)
    if settings.bus_socket and role is Role.SERVE:
        return SocketBus(settings.bus_socket, instance=hub.instance)
    return MemoryBus()


def build_runtime(
    settings: Settings, *, clock: Clock | None = None, bus: EventBus | None = None, role: Role = Role.SERVE
) -> Runtime:
    """The runtime of one process, with its transaction hooks and presence installed."""
    revisions = Revisions()
    hub = Hub(instance=f"worker-{secrets.token_hex(6)}" if role is Role.WORKER else secrets.token_hex(6))
    runtime = Runtime(
        settings=settings,
        db=Database.from_settings(settings),
        bus=bus or build_bus(settings, hub, role=role),
        clock=clock or settings.clock(),
        screens=ScreenStates(revisions, max_age=settings.screen_max_age_seconds, poll_renders=poll_renders(settings)),
        auth_cache=AuthCache(ttl=settings.auth_cache_seconds),
        key_cache=KeyCache(ttl=settings.auth_cache_seconds),
        hub=hub,
    )
    hub.clock = runtime.clock.now
    hub.on_delivered = runtime.metrics.messages_delivered.inc
    runtime.screens.on_lane_wait = runtime.metrics.poll_renders_waited.inc
    install_hooks(runtime)
    presence.follow_screens(runtime.screens, hub=hub, bus=runtime.bus)
    return runtime


def install_hooks(rt: Runtime) -> None:
    """The push and webhook outboxes (and the mail outbox, with a relay) written in every unit of work."""

    def data_for(event: DomainEvent, device: outbox.Recipient) -> str:
        # A mobile app names its client with its device id: the message fits the screen it showed last.
        screen = rt.hub.screen_of(device.device_key)
        message = message_for(frozenset(event.topics), screen) if screen and screen.user_id == device.user_id else None
        return str(message or TIMEOUT_ONLY)

    async def outbox_hook(session: AsyncSession, events: list[DomainEvent]) -> None:
        # As for webhooks: push dispatchers are woken only when notifications were queued (a user without
        # devices costs them nothing).
        if any(e.notify_user_ids for e in events) and await outbox.enqueue(
            session, events, now=rt.clock.now(), data_for=data_for
        ):
            events.append(DomainEvent(outbox.QUEUED_EVENT, topics=()))

    async def webhook_hook(session: AsyncSession, events: list[DomainEvent]) -> None:
        # Webhook dispatchers (on any instance) are woken only when deliveries were queued: without subscribed
        # endpoints an event costs them nothing (their claim is a write transaction).
        if any(webhook_rules.event_type_for(e.kind) for e in events) and await webhook_outbox.enqueue(
            session, events, now=rt.clock.now()
        ):
            events.append(DomainEvent(webhook_rules.QUEUED_EVENT, topics=()))

    async def mail_hook(session: AsyncSession, events: list[DomainEvent]) -> None:
        # Without a relay there is no mail: nothing is queued (docs/notifications.md).
        if any(mail_outbox.mails_for(e) for e in events) and await mail_outbox.enqueue(
            session, events, now=rt.clock.now(), sender=rt.settings.mail_from
        ):
            events.append(DomainEvent(mail_outbox.QUEUED_EVENT, topics=()))

    rt.transaction_hooks.append(outbox_hook)
    rt.transaction_hooks.append(webhook_hook)
    if rt.settings.smtp_url:
        rt.transaction_hooks.append(mail_hook)


# --- the process ------------------------------------------------------------------------------------------------


@dataclass
class Assembly:
    """One process's runtime and background tasks: ``start`` checks the data, joins the bus and starts the tasks;
    ``stop`` stops them (together), leaves the bus and closes the database."""

    runtime: Runtime
    role: Role
    tasks: Running
    _hears: frozenset[str] = frozenset()  # ``hears``, as it stands once the tasks are built

    def hears(self) -> frozenset[str]:
        """The kinds this process listens for whatever their topics: the hub's (presence, revoked tokens), the
        auth and key caches', and those that wake one of its tasks (a task's ``wakes`` goes by the kind)."""
        woken = {kind for kind in EventKind if self.tasks.woken_by(DomainEvent(kind, topics=()))}
        return frozenset({*Hub.HEARS, *auth.HEARS, *api_keys.HEARS, *woken})

    def wants(self, kinds: Collection[str], topics: Collection[str]) -> bool:
        """Whether this process listens for another's batch of ``kinds`` on ``topics`` (``SharedBus.wants``): a
        kind it hears (``hears``), or a topic one of its open streams' screens shows. Any other batch is only
        marked here: nothing of this process would do anything with its events."""
        return not self._hears.isdisjoint(kinds) or self.runtime.hub.watches(topics)

    def passing(self, topics: Collection[str]) -> None:
        """A batch of another process that was only marked here (``wants`` said no)."""
        self.runtime.hub.passing(topics)
        self.runtime.metrics.events_marked_only.inc()

    async def on_event(self, event: DomainEvent) -> None:
        """The event fan-out: every event of the bus (this process's and, on a shared bus, the others' that it
        listens for: ``wants``)."""
        rt = self.runtime
        rt.metrics.events_received.inc()
        if not isinstance(rt.bus, SharedBus):  # a shared bus marks the topics itself (realtime/shared.py)
            rt.screens.revisions.bump(event.topics)
        await auth.on_event(rt, event)
        api_keys.on_event(rt, event)
        await rt.hub.on_event(event)
        self.tasks.on_event(event)

    async def check(self) -> None:
        """A secrets key that does not open the stored secrets stops the start, with its reason (SecretKeyError,
        the database closed); files of the data directory that others may read are named in a warning."""
        settings = self.runtime.settings
        database = make_url(settings.database_url).database if settings.is_sqlite else None
        private_files.warn_wide(settings.data_dir, database)
        try:
            await secret_rows.check_keys(self.runtime.db)
        except SecretKeyError:
            await self.runtime.db.dispose()
            raise

    async def start(self) -> None:
        await self.check()
        self.runtime.bus.subscribe(self.on_event)
        await self.runtime.bus.start()
        self.tasks.start()

    async def stop(self) -> None:
        await self.tasks.stop()
        await self.runtime.bus.stop()
        await self.runtime.db.dispose()

    def _follow_bus(self) -> None:
        """A shared bus keeps a server's screen state in step with the other processes (it adopts the bus's epoch
        and marks on every (re)connection). One that reconnects may have lost events: open streams refresh once,
        and every task looks again at once (stream tokens are re-checked: a logout made meanwhile could not reach
        this instance; queued deliveries are looked for)."""
        rt = self.runtime
        bus = rt.bus
        if not isinstance(bus, SharedBus):
            return
        if self.role is Role.SERVE:
            bus.attach(rt.screens)
        self._hears = self.hears()
        bus.wants = self.wants
        bus.passing = self.passing

        def on_reconnect() -> None:
            self.tasks.wake_all()
            rt.hub.timeout_all()

        bus.on_reconnect = on_reconnect
        bus.on_state = lambda connected: rt.metrics.bus_connected.set(1 if connected else 0)


def assemble(
    settings: Settings,
    *,
    role: Role = Role.SERVE,
    clock: Clock | None = None,
    bus: EventBus | None = None,
    registry: tuple[Job, ...] = REGISTRY,
) -> Assembly:
    """Build (not start) what a process of ``role`` runs with ``settings``: its runtime and the registry's tasks
    that belong to it."""
    runtime = build_runtime(settings, clock=clock, bus=bus, role=role)
    assembly = Assembly(runtime, role, build_tasks(runtime, jobs_for(role, settings, registry)))
    assembly._follow_bus()
    return assembly
