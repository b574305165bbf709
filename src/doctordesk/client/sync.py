"""The message rules of spec 6.1 (``Timeout``, ``Timeout <endpoint>``, ``<endpoint>``) applied to a client's open
screens, each current for its own part of the interface (docs/client-sdk.md, Keeping screens in sync)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from doctordesk.client.changes import Trigger
from doctordesk.realtime.message import EndpointCheck, InvalidMessage, RealtimeMessage, parse

log = logging.getLogger(__name__)


class SyncedScreen(Protocol):
    """What the message rules use of an open screen."""

    @property
    def poll_endpoint(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    def cancel_timer(self) -> None: ...

    async def poll_in_background(self, trigger: Trigger) -> None: ...

    async def patch_in_background(self, endpoint: str, trigger: Trigger) -> None: ...


S = TypeVar("S", bound=SyncedScreen)


def path_of(endpoint: str) -> str:
    """The path of an endpoint, without its query string."""
    return urlsplit(endpoint).path


def patch_templates(api: dict[str, Any]) -> list[str]:
    """The PATCH path templates an OpenAPI description lists (what a real-time message may name)."""
    paths = api.get("paths")
    if not isinstance(paths, dict):
        return []
    return sorted(p for p, ops in paths.items() if isinstance(ops, dict) and "patch" in ops)


def targets(endpoint: str, screens: Sequence[S]) -> list[S]:
    """The screens a message's endpoint is for: those polling it, else the most recently opened one."""
    polling = [s for s in screens if path_of(s.poll_endpoint) == endpoint]
    return polling or list(screens[-1:])


def plan(message: RealtimeMessage, screens: Sequence[SyncedScreen]) -> list[Coroutine[Any, Any, None]]:
    """Cancel the timers a message cancels (now) and return the requests it calls for (to run)."""
    open_screens = [s for s in screens if not s.closed]
    jobs: list[Coroutine[Any, Any, None]] = []
    if message.timeout:
        for screen in open_screens:  # rule 1: every timer stops before any request goes out
            screen.cancel_timer()
        jobs.extend(screen.poll_in_background("stream") for screen in open_screens)
    if message.endpoint is not None:
        for screen in targets(message.endpoint, open_screens):
            polls_it = path_of(screen.poll_endpoint) == message.endpoint
            if message.timeout and polls_it:
                continue
            endpoint = screen.poll_endpoint if polls_it else message.endpoint
            jobs.append(screen.patch_in_background(endpoint, "stream"))
    return jobs


async def handle(text: str, screens: Sequence[SyncedScreen], *, is_endpoint: EndpointCheck) -> None:
    """Parse a real-time message and act on it (invalid messages are logged and ignored)."""
    try:
        message = parse(text, is_endpoint=is_endpoint)
    except InvalidMessage as exc:
        log.info("ignoring real-time message %r: %s", text[:100], exc)
        return
    jobs = plan(message, screens)
    if jobs:
        await asyncio.gather(*jobs)
