"""What a screen and the real-time stream need of the client that holds them: ``Client`` is such a host."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

import httpx

from doctordesk.client.forms import FormFiles
from doctordesk.client.timers import Scheduler


class Spawner(Protocol):
    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None: ...


class ScreenHost(Spawner, Protocol):
    """Calls, background tasks and poll timers for the screens a client holds."""

    min_poll_seconds: float
    scheduler: Scheduler

    async def request(
        self,
        method: str,
        path: str,
        *,
        state: str | None = None,
        data: dict[str, str] | None = None,
        files: FormFiles | None = None,
        auth: bool = True,
    ) -> Any: ...

    def _forget(self, screen: Any) -> None: ...


class StreamHost(Spawner, Protocol):
    """The connection, the API description and the message handling a real-time stream works with."""

    http: httpx.AsyncClient

    async def api_description(self) -> dict[str, Any]: ...

    def forget_api_description(self) -> None: ...

    def headers(self, *, state: str | None = None, auth: bool = True) -> dict[str, str]: ...

    async def handle_message(self, text: str) -> None: ...

    async def reannounce(self) -> None: ...
