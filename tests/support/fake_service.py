"""A scripted stand-in for the service, for the SDK's pure client-side rules (timers, message handling, patch
application): it answers PUT with a page and PATCH/POST with queued update sets, and records every request.
Anything that involves the service's behaviour is tested against the real server (tests/e2e/client)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx

from doctordesk.client import Client


def page(
    screen: str,
    endpoint: str,
    elements: list[dict[str, Any]],
    *,
    timeout: int = 30,
    state: str = "s0",
    poll: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": "page",
        "screen": screen,
        "title": screen,
        "endpoint": endpoint,
        "poll": poll or endpoint,
        "timeout": timeout,
        "layout": "desktop",
        "state": state,
        "elements": elements,
    }


def update(
    screen: str, patches: list[dict[str, Any]] | None = None, *, state: str = "s1", timeout: int = 30, **extra: Any
) -> dict[str, Any]:
    return {"kind": "update", "screen": screen, "state": state, "timeout": timeout, "patches": patches or [], **extra}


@dataclass
class Seen:
    method: str
    path: str
    headers: httpx.Headers
    form: dict[str, list[str]]
    body: bytes


@dataclass
class FakeService:
    """Pages by PUT path; update sets queued by (method, path); an empty update set when none is queued."""

    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[tuple[str, str], list[tuple[int, Any, dict[str, str]]]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def queue(
        self, method: str, path: str, body: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.answers.setdefault((method, path), []).append((status, body, headers or {}))

    def handler(self, request: httpx.Request) -> httpx.Response:
        body = request.content
        form = (
            parse_qs(body.decode())
            if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded")
            else {}
        )
        path = request.url.raw_path.decode()
        self.seen.append(Seen(request.method, path, request.headers, form, body))
        queued = self.answers.get((request.method, path))
        if queued:
            status, answer, headers = queued.pop(0)
            return httpx.Response(status, json=answer, headers=headers)
        if request.method == "PUT" and path in self.pages:
            return httpx.Response(200, json=self.pages[path])
        if request.method == "PATCH":
            current = next((p for p in self.pages.values() if p["poll"] == path), None)
            if current is not None:
                state = request.headers.get("X-Screen-State", "")
                return httpx.Response(200, json=update(current["screen"], state=state, timeout=current["timeout"]))
        return httpx.Response(
            404, json={"kind": "error", "code": "NOT_FOUND", "message": "Not found.", "status": 404, "fields": {}}
        )

    def requests(self, method: str | None = None) -> list[tuple[str, str]]:
        return [(s.method, s.path) for s in self.seen if method is None or s.method == method]


@dataclass
class FakeTimer:
    due: float
    callback: Callable[[], None]
    cancelled: bool = False
    fired: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeScheduler:
    """A virtual clock for the poll timers: ``await advance(seconds)`` fires what falls due."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[FakeTimer] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def pending(self) -> list[float]:
        """Due times of the timers still armed."""
        return sorted(t.due for t in self.timers if not t.cancelled and not t.fired)

    async def advance(self, seconds: float, client: Client | None = None) -> None:
        target = self.now + seconds
        while True:
            due = [t for t in self.timers if not t.cancelled and not t.fired and t.due <= target]
            if not due:
                break
            timer = min(due, key=lambda t: t.due)
            self.now = timer.due
            timer.fired = True
            timer.callback()
            if client is not None:
                await settle(client)
        self.now = target


async def settle(client: Client) -> None:
    """Let the client's background tasks (timer polls, message handling) finish."""
    for _ in range(20):
        await asyncio.sleep(0)
        tasks = list(client._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def fake_client(service: FakeService, scheduler: FakeScheduler | None = None, **kwargs: Any) -> Client:
    return Client(
        "http://service.test",
        transport=httpx.MockTransport(service.handler),
        scheduler=scheduler or FakeScheduler(),
        realtime=False,
        **kwargs,
    )
