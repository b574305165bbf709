"""How the real-time parts hook into the runtime: the bus, presence from pages and polls, the push outbox hook, the
dispatcher. The app factory and the worker call these (nothing here runs at import time)."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import bulk
from doctordesk.domain.webhooks import rules as webhooks
from doctordesk.realtime import outbox
from doctordesk.realtime.bus import EventBus, MemoryBus
from doctordesk.realtime.hub import Hub
from doctordesk.realtime.lease import DrainLoop
from doctordesk.realtime.message import TIMEOUT_ONLY
from doctordesk.realtime.push import make_adapter, push_enabled
from doctordesk.realtime.redis_bus import RedisBus
from doctordesk.realtime.routing import Screen, message_for
from doctordesk.realtime.shared import SharedBus
from doctordesk.realtime.socket_bus import SocketBus
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Shown, Viewer
from doctordesk.services.mail import outbox as mail_outbox
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.workers.bulk_exporter import BulkExporter
from doctordesk.workers.mail_dispatcher import MailDispatcher
from doctordesk.workers.push_dispatcher import Dispatcher
from doctordesk.workers.reminders import ReminderSender
from doctordesk.workers.webhook_dispatcher import WebhookDispatcher

log = logging.getLogger(__name__)


def build_bus(settings: Settings, hub: Hub) -> EventBus:
    """The Redis bus when ``DOCTORDESK_REDIS_URL`` is set, else the Unix-socket bus of ``serve --workers N``
    (``DOCTORDESK_BUS_SOCKET``), else the in-process bus."""
    if settings.redis_url:
        return RedisBus(settings.redis_url, channel=settings.redis_channel, instance=hub.instance)
    if settings.bus_socket:
        return SocketBus(settings.bus_socket, instance=hub.instance)
    return MemoryBus()


def install(rt: Runtime) -> None:
    """Presence from every page and poll answer handed out, and the push and webhook outboxes in every unit of
    work."""
    pending: set[asyncio.Task[None]] = set()
    last_shared: list[asyncio.Task[None]] = []  # the presence change published last: the next one waits for it

    def on_shown(viewer: Viewer, shown: Shown, *, opened: bool) -> None:
        client_id = viewer.client_id
        if client_id is None:
            return
        current = rt.hub.screen_of(client_id)
        if current is not None and current.user_id == viewer.user_id and (not opened or _is(current, shown)):
            # Nothing new (every unchanged poll ends here: no allocation, no I/O). A poll only tells a screen the
            # instance does not know for this client; it never replaces the one the client opened last, since a
            # client may show two (the web app's list and chat panel) and presence holds one.
            return
        screen = Screen(user_id=viewer.user_id, screen=shown.screen, poll=shown.poll, topics=shown.topics)
        rt.hub.set_presence(client_id, screen)
        if isinstance(rt.bus, SharedBus):
            # Other instances may hold this client's stream, or get it later: tell them and keep it in Redis
            # (fire and forget; neither raises).
            after = last_shared.pop() if last_shared else None
            task = asyncio.get_running_loop().create_task(_share_presence(rt, rt.bus, client_id, screen, after))
            last_shared.append(task)
            pending.add(task)
            task.add_done_callback(pending.discard)

    rt.screens.listeners.append(on_shown)

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
        if any(webhooks.event_type_for(e.kind) for e in events) and await webhook_outbox.enqueue(
            session, events, now=rt.clock.now()
        ):
            events.append(DomainEvent(webhooks.QUEUED_EVENT, topics=()))

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


PRESENCE_TTL_SECONDS = 24 * 3600


def _is(screen: Screen, shown: Shown) -> bool:
    return screen.screen == shown.screen and screen.poll == shown.poll and screen.topics == shown.topics


async def _share_presence(
    rt: Runtime, bus: SharedBus, client_id: str, screen: Screen, after: asyncio.Task[None] | None
) -> None:
    """Publish and keep one presence change, after the one before it (``after``) is done: changes leave in the
    order they were made, so the screen a client opened last is the one other instances see and Redis keeps."""
    if after is not None:
        await asyncio.wait({after})
    event = rt.hub.presence_event(client_id, screen)
    await bus.publish([event])
    await bus.remember(f"presence:{client_id}", json.dumps(event.data), ttl_seconds=PRESENCE_TTL_SECONDS)


async def recall_presence(rt: Runtime, client_id: str) -> None:
    """A stream opens for a client this instance has no screen for (it started after the client's last PUT or
    poll, or restarted): take the screen kept in Redis, if any."""
    if rt.hub.screen_of(client_id) is not None or not isinstance(rt.bus, SharedBus):
        return
    raw = await rt.bus.recall(f"presence:{client_id}")
    if raw:
        try:
            rt.hub.restore_presence(json.loads(raw))
        except ValueError:
            return


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
    """The mail sender for this runtime; None (said once in the log) when no SMTP relay is configured."""
    if not rt.settings.smtp_url:
        log.info("no SMTP relay (DOCTORDESK_SMTP_URL): patients are not sent email")
        return None
    return MailDispatcher(rt.db, settings=rt.settings, clock=rt.clock, on_changed=rt.publish)


def build_bulk_exporter(rt: Runtime) -> BulkExporter:
    """The FHIR bulk exporter for this runtime (docs/fhir.md#bulk-export)."""
    return BulkExporter(rt.db, settings=rt.settings, clock=rt.clock)


def build_reminder_sender(rt: Runtime) -> ReminderSender | None:
    """The reminder sender for this runtime (what it queues wakes the mail and push senders of every instance);
    None when there is no way to reach a patient (no SMTP relay, no push partner): a reminder is recorded as sent
    only when it could go."""
    if not reminders_reach_patients(rt.settings):
        log.info("no SMTP relay and no push partner: patients are not sent reminders")
        return None
    return ReminderSender(rt.db, settings=rt.settings, clock=rt.clock, on_queued=rt.publish)


def reminders_reach_patients(settings: Settings) -> bool:
    """A relay or a push partner is configured (as ``build_mail_dispatcher`` and ``make_adapter`` read them)."""
    return bool(settings.smtp_url) or push_enabled(settings.push_adapter, settings.push_url)


def worker_bus(
    settings: Settings,
    *,
    webhook_loop: DrainLoop,
    push_loop: DrainLoop | None = None,
    mail_loop: DrainLoop | None = None,
    bulk_loop: DrainLoop | None = None,
) -> RedisBus | None:
    """What wakes a ``doctordesk worker``'s dispatchers as soon as deliveries are queued: with Redis, the servers'
    "queued" events (and a reconnection, since events may have been missed meanwhile). None without Redis: a
    worker shares no process with the servers, so it finds new deliveries by polling alone."""
    if not settings.redis_url:
        return None
    loops = [loop for loop in (webhook_loop, push_loop, mail_loop, bulk_loop) if loop is not None]

    def look_again() -> None:
        for loop in loops:
            loop.wake()

    bus = RedisBus(
        settings.redis_url,
        channel=settings.redis_channel,
        instance=f"worker-{secrets.token_hex(6)}",
        on_reconnect=look_again,
    )

    async def on_event(event: DomainEvent) -> None:
        if webhooks.wakes_dispatcher(event.kind):
            webhook_loop.wake()
        if push_loop is not None and event.kind == outbox.QUEUED_EVENT:
            push_loop.wake()
        if mail_loop is not None and event.kind == mail_outbox.QUEUED_EVENT:
            mail_loop.wake()
        if bulk_loop is not None and event.kind == bulk.QUEUED_EVENT:
            bulk_loop.wake()

    bus.subscribe(on_event)
    return bus
