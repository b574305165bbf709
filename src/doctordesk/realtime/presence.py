"""Presence from every page and poll answer handed out: the hub learns which screen each client shows, and with a
shared bus (Redis) the other instances learn it too and Redis keeps it, so a stream that opens on another instance
(or after a restart) is routed for the client's screen."""

from __future__ import annotations

import asyncio
import json

from doctordesk.realtime.bus import EventBus
from doctordesk.realtime.hub import Hub
from doctordesk.realtime.routing import Screen
from doctordesk.realtime.shared import SharedBus
from doctordesk.screens.state import ScreenStates, Shown, Viewer

PRESENCE_TTL_SECONDS = 24 * 3600


def follow_screens(screens: ScreenStates, *, hub: Hub, bus: EventBus) -> None:
    """Set ``hub``'s presence from every page and poll answer ``screens`` hands out (and share it on ``bus`` when
    several processes share one)."""
    pending: set[asyncio.Task[None]] = set()
    last_shared: list[asyncio.Task[None]] = []  # the presence change published last: the next one waits for it

    def on_shown(viewer: Viewer, shown: Shown, *, opened: bool) -> None:
        client_id = viewer.client_id
        if client_id is None:
            return
        current = hub.screen_of(client_id)
        if current is not None and current.user_id == viewer.user_id and (not opened or _is(current, shown)):
            # Nothing new (every unchanged poll ends here: no allocation, no I/O). A poll only tells a screen the
            # instance does not know for this client; it never replaces the one the client opened last, since a
            # client may show two (the web app's list and chat panel) and presence holds one.
            return
        screen = Screen(user_id=viewer.user_id, screen=shown.screen, poll=shown.poll, topics=shown.topics)
        hub.set_presence(client_id, screen)
        if isinstance(bus, SharedBus):
            # Other instances may hold this client's stream, or get it later: tell them and keep it in Redis
            # (fire and forget; neither raises).
            after = last_shared.pop() if last_shared else None
            task = asyncio.get_running_loop().create_task(_share_presence(hub, bus, client_id, screen, after))
            last_shared.append(task)
            pending.add(task)
            task.add_done_callback(pending.discard)

    screens.listeners.append(on_shown)


def _is(screen: Screen, shown: Shown) -> bool:
    return screen.screen == shown.screen and screen.poll == shown.poll and screen.topics == shown.topics


async def _share_presence(
    hub: Hub, bus: SharedBus, client_id: str, screen: Screen, after: asyncio.Task[None] | None
) -> None:
    """Publish and keep one presence change, after the one before it (``after``) is done: changes leave in the
    order they were made, so the screen a client opened last is the one other instances see and Redis keeps."""
    if after is not None:
        await asyncio.wait({after})
    event = hub.presence_event(client_id, screen)
    await bus.publish([event])
    await bus.remember(f"presence:{client_id}", json.dumps(event.data), ttl_seconds=PRESENCE_TTL_SECONDS)


async def recall_presence(hub: Hub, bus: EventBus, client_id: str) -> None:
    """A stream opens for a client this instance has no screen for (it started after the client's last PUT or
    poll, or restarted): take the screen kept in Redis, if any."""
    if hub.screen_of(client_id) is not None or not isinstance(bus, SharedBus):
        return
    raw = await bus.recall(f"presence:{client_id}")
    if raw:
        try:
            hub.restore_presence(json.loads(raw))
        except ValueError:
            return
