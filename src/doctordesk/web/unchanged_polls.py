"""Unchanged polls answered again from memory, ahead of the framework's middleware and routing: the same poll, while
its credentials and the screen's state token still hold, gets the same bytes (docs/protocol.md, Unchanged polls
answered from memory)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from doctordesk import i18n
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.screens.state import Unchanged, unchanged_answer
from doctordesk.services.accounts import auth
from doctordesk.web.deps import ACTOR_SCOPE_KEY

SIZE = 10_000
MAX_KEY_BYTES = 2048  # a poll whose keyed headers are longer is not kept (real ones are far shorter)
# The request headers the full path's answer depends on, in the key's order (the first of each counts, as there).
_KEYED = {b"authorization": 0, b"x-screen-state": 1, b"x-client-id": 2, b"x-layout": 3, b"accept-language": 4}
# Headers that send a poll down the full path: push headers may register a device; a body is read and checked.
_FULL_PATH = frozenset((b"x-device-id", b"x-push-platform", b"x-push-token", b"transfer-encoding"))

Key = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Kept:
    """An unchanged answer kept for its poll: for whom, what it said, and the response as sent."""

    actor: Actor
    answer: Unchanged
    language: str
    timer: Any  # the request latency histogram's child for the poll's route
    start: Message
    body: bytes


class UnchangedPolls:
    """Pure ASGI layer in front of the whole app (``app.Service``)."""

    def __init__(self, app: ASGIApp, *, runtime: Runtime, size: int = SIZE) -> None:
        self.app = app
        self.runtime = runtime
        self.size = size
        self._kept: dict[Key, Kept] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(scope) if scope["type"] == "http" and scope["method"] == "PATCH" else None
        if key is None:
            await self.app(scope, receive, send)
            return
        kept = self._kept.get(key)
        if kept is not None:
            started = time.perf_counter()
            if self._still(kept, key[2]):
                await send(kept.start)
                await send({"type": "http.response.body", "body": kept.body})
                self.runtime.metrics.polls_from_memory.inc()
                kept.timer.observe(time.perf_counter() - started)
                return
            self._kept.pop(key, None)
        await self._full_path(key, scope, receive, send)

    def _still(self, kept: Kept, authorization: bytes) -> bool:
        """Whether the kept answer is still the answer, as the full path would find; presence told when it is."""
        scheme, _, credentials = authorization.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or auth.cached_actor(self.runtime, credentials.strip()) != kept.actor:
            return False
        states = self.runtime.screens
        answer = kept.answer
        i18n.use(kept.language)  # the same actor and Accept-Language: the language the full path would speak
        if not states.unchanged(answer.token, answer.shown.topics, self.runtime.wall(), viewer=answer.viewer):
            return False
        states.shown_to(answer.viewer, answer.shown, opened=False)
        return True

    async def _full_path(self, key: Key, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        body: list[bytes] = []
        complete = False

        async def watch(message: Message) -> None:
            nonlocal start, complete
            if message["type"] == "http.response.start":
                if message["status"] == 200 and unchanged_answer.get() is not None:
                    start = message
            elif start is not None and message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                complete = not message.get("more_body", False)
            await send(message)

        reset = unchanged_answer.set(None)
        try:
            await self.app(scope, receive, watch)
            answer = unchanged_answer.get()
        finally:
            unchanged_answer.reset(reset)
        actor = scope.get(ACTOR_SCOPE_KEY)
        route = getattr(scope.get("route"), "path_format", None)
        if answer is None or start is None or not complete or not isinstance(actor, Actor) or route is None:
            return
        while len(self._kept) >= self.size:
            self._kept.pop(next(iter(self._kept)))
        timer = self.runtime.metrics.request_seconds.labels("PATCH", route)
        self._kept[key] = Kept(actor, answer, i18n.current(), timer, start, b"".join(body))


def _key(scope: Scope) -> Key | None:
    """The poll's key, or None when it must take the full path (no credentials or state token, push headers, a
    body, keyed headers too long)."""
    values: list[bytes | None] = [None, None, None, None, None]
    for name, value in scope["headers"]:
        slot = _KEYED.get(name)
        if slot is not None:
            if values[slot] is None:
                values[slot] = value
        elif name in _FULL_PATH or (name == b"content-length" and value != b"0"):
            return None
    if values[0] is None or values[1] is None or sum(len(v) for v in values if v) > MAX_KEY_BYTES:
        return None
    return (scope["path"], scope.get("query_string", b""), *values)
