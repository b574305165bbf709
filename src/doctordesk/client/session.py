"""The SDK's entry point: a ``Client`` holds the connection, the access token, the headers every call carries, the
open screens and the real-time stream that keeps them in sync.

    async with Client("http://127.0.0.1:8000") as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        async for change in screen.changes():
            ...
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass, replace
from typing import Any, Literal

import httpx

from doctordesk.client import sync
from doctordesk.client.errors import (
    ClientError,
    NotLoggedIn,
    ProtocolError,
    TransportError,
    Unauthorized,
    decode,
    decode_error,
)
from doctordesk.client.forms import FormFiles
from doctordesk.client.screen import Screen
from doctordesk.client.stream import RealtimeStream
from doctordesk.client.timers import LoopScheduler, Scheduler
from doctordesk.realtime.message import EndpointCheck, EndpointMatcher, load_vectors

log = logging.getLogger(__name__)

Layout = Literal["desktop", "mobile"]
PushPlatform = Literal["ios", "android"]


@dataclass(frozen=True, slots=True)
class User:
    """The logged-in user, as the service describes them."""

    id: int
    username: str
    role: str
    display_name: str
    language: str | None = None  # the stored choice (en, de); None: the calls' Accept-Language decides

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> User:
        language = data.get("language")
        return cls(
            int(data["id"]),
            str(data["username"]),
            str(data["role"]),
            str(data.get("display_name", "")),
            language if isinstance(language, str) else None,
        )


@dataclass(frozen=True, slots=True)
class PushRegistration:
    """A mobile device's current push token, sent on every call (spec 5.4) so the service notifies the user last
    active on the device. Replace it with ``client.set_push`` whenever the platform hands out a new token."""

    token: str
    platform: PushPlatform
    device_id: str


PUSH_TOKEN_HEADER = "X-Push-Token"
PUSH_PLATFORM_HEADER = "X-Push-Platform"
DEVICE_ID_HEADER = "X-Device-Id"


CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def default_client_id(push: PushRegistration | None) -> str:
    """A mobile back-end names the client by its device id (docs/realtime.md: a push then carries the message for
    the screen the device showed last); otherwise a random id per ``Client``."""
    if push is not None and CLIENT_ID.fullmatch(push.device_id):
        return push.device_id
    return f"sdk-{secrets.token_hex(8)}"


class Client:
    """An async client of one doctordesk service for one user at a time.

    ``client_id`` identifies this client to the service's real-time routing (default: the push registration's
    device id, else a random id per Client);
    ``layout`` chooses desktop or mobile elements; ``language`` (en, de) is sent as Accept-Language, so screens
    and errors come in it (a user's stored choice, ``set_language``, wins); ``push`` adds the push headers;
    ``realtime`` opens the SSE stream while logged in (polling runs either way, as the spec asks);
    ``transport``/``http`` let tests and integrators supply their own httpx transport or client; ``scheduler`` the
    poll timers.
    """

    def __init__(
        self,
        base_url: str,
        *,
        client_id: str | None = None,
        layout: Layout = "desktop",
        language: str | None = None,
        push: PushRegistration | None = None,
        realtime: bool = True,
        timeout: float = 10.0,
        min_poll_seconds: float = 0.5,
        reconnect_delay: float = 1.0,
        transport: httpx.AsyncBaseTransport | None = None,
        http: httpx.AsyncClient | None = None,
        scheduler: Scheduler | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.client_id = client_id or default_client_id(push)
        self.layout: Layout = layout
        self.language = language
        self.push = push
        self.min_poll_seconds = min_poll_seconds
        self.reconnect_delay = reconnect_delay
        self.scheduler: Scheduler = scheduler or LoopScheduler()
        self.http = http or httpx.AsyncClient(base_url=self.base_url, transport=transport, timeout=timeout)
        self._owns_http = http is None
        self._token: str | None = None
        self.user: User | None = None
        self._screens: list[Screen] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._api: dict[str, Any] | None = None
        self.is_endpoint: EndpointCheck = EndpointMatcher(load_vectors()["patch_endpoints"])
        self.realtime = realtime
        self.stream: RealtimeStream | None = None  # open while logged in with realtime on

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # --- the session -----------------------------------------------------------------------------------------

    @property
    def token(self) -> str | None:
        """The current access token (None when logged out)."""
        return self._token

    async def login(self, username: str, password: str) -> User:
        """Log in; the token is used for every later call, and the real-time stream is (re)opened with it."""
        body = await self.request("POST", "/auth/login", data={"username": username, "password": password}, auth=False)
        if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            raise ProtocolError("the login answer has no access token")
        await self.use_token(body["access_token"], User.from_json(body["user"]) if "user" in body else None)
        return self.user  # type: ignore[return-value]

    async def use_token(self, token: str | None, user: User | None = None) -> None:
        """Adopt an access token obtained elsewhere (None: forget it); the stream reopens with it (spec 5.2)."""
        self._token = token
        self.user = user
        if token is not None and user is None:
            try:
                self.user = User.from_json(await self.request("GET", "/auth/me"))
            except ClientError:
                self._token = None  # not a token this service accepts: stay logged out
                raise
        await self._restart_stream()

    async def logout(self) -> None:
        """Revoke the token on the service, close every screen and the stream (a token the service no longer accepts
        counts as revoked)."""
        token = self._token
        try:
            if token is not None:
                await self.request("POST", "/auth/logout")
        except Unauthorized:
            pass  # already expired or revoked: logged out either way
        finally:
            self._token = None
            self.user = None
            for screen in list(self._screens):
                await screen.close()
            await self._restart_stream()

    async def set_language(self, language: str) -> None:
        """Store the user's language (en, de) with the account: every screen, error and push for them uses it, on
        every device (docs/web-app.md#language). Later calls of this client ask for it too."""
        await self.request("PUT", "/profile/language", data={"language": language})
        self.language = language
        if self.user is not None:
            self.user = replace(self.user, language=language)

    def set_push(self, push: PushRegistration | None) -> None:
        """Use this push registration on every later call (None: stop sending push headers)."""
        self.push = push

    # --- requests --------------------------------------------------------------------------------------------

    def headers(self, *, state: str | None = None, auth: bool = True) -> dict[str, str]:
        """The headers of a call: token, client id, layout, push registration and the screen's state token."""
        out = {"X-Client-Id": self.client_id, "X-Layout": self.layout, "Accept": "application/json"}
        if auth and self._token is not None:
            out["Authorization"] = f"Bearer {self._token}"
        if self.push is not None:
            out[PUSH_TOKEN_HEADER] = self.push.token
            out[PUSH_PLATFORM_HEADER] = self.push.platform
            out[DEVICE_ID_HEADER] = self.push.device_id
        if self.language:
            out["Accept-Language"] = self.language
        if state:
            out["X-Screen-State"] = state
        return out

    async def request(
        self,
        method: str,
        path: str,
        *,
        state: str | None = None,
        data: dict[str, str] | None = None,
        files: FormFiles | None = None,
        auth: bool = True,
    ) -> Any:
        """Send one call and return its decoded JSON (None for an empty answer).

        Error answers raise the ``ApiError`` of their code; connection failures ``TransportError``.
        """
        if auth and self._token is None:
            raise NotLoggedIn(f"{method} {path} needs an access token: log in first")
        try:
            response = await self.http.request(
                method,
                path,
                headers=self.headers(state=state, auth=auth),
                data=data or None,
                files=files or None,
            )
        except httpx.HTTPError as exc:
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return decode(response)

    async def download(self, path: str) -> tuple[bytes, str]:
        """GET a file the service serves (an attachment's ``props.href``): its bytes and content type."""
        if self._token is None:
            raise NotLoggedIn(f"GET {path} needs an access token: log in first")
        try:
            response = await self.http.get(path, headers=self.headers())
        except httpx.HTTPError as exc:
            raise TransportError(f"GET {path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise decode_error(response)
        return response.content, response.headers.get("content-type", "application/octet-stream")

    # --- screens ---------------------------------------------------------------------------------------------

    async def open(self, endpoint: str) -> Screen:
        """PUT ``endpoint`` and keep the page in sync until the screen is closed."""
        screen = Screen(self, await self.request("PUT", endpoint))
        self._screens.append(screen)
        screen._schedule()
        return screen

    @property
    def screens(self) -> tuple[Screen, ...]:
        """The open screens, oldest first (the last is the active one)."""
        return tuple(self._screens)

    async def handle_message(self, text: str) -> None:
        """Act on a real-time message (an SSE event's data, or a push notification's custom data string) by the
        rules of spec 6.1. Messages that are not valid are ignored."""
        await sync.handle(text, self._screens, is_endpoint=self.is_endpoint)

    async def reannounce(self) -> None:
        """PUT the active (most recently opened) screen again, so the service's real-time routing knows it; a
        failure is reported as the screen's ``error`` change."""
        if self._screens:
            screen = self._screens[-1]
            try:
                await screen.reannounce()
            except ClientError as exc:
                screen._background_error(exc, "reload")

    def _forget(self, screen: Screen) -> None:
        if screen in self._screens:
            self._screens.remove(screen)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- the real-time stream --------------------------------------------------------------------------------

    async def api_description(self) -> dict[str, Any]:
        """The service's ``/openapi.json`` (fetched once)."""
        if self._api is None:
            body = await self.request("GET", "/openapi.json", auth=False)
            if not isinstance(body, dict):
                raise ProtocolError("/openapi.json is not an object")
            self._api = body
            templates = sync.patch_templates(body)
            if templates:
                self.is_endpoint = EndpointMatcher([*templates, *load_vectors()["patch_endpoints"]])
        return self._api

    def forget_api_description(self) -> None:
        """Fetch ``/openapi.json`` again when next asked."""
        self._api = None

    async def _restart_stream(self) -> None:
        if self.stream is not None:
            await self.stream.stop()
            self.stream = None
        if self.realtime and self._token is not None:
            self.stream = RealtimeStream(self, reconnect_delay=self.reconnect_delay)
            self.stream.start()

    async def aclose(self) -> None:
        """Close the screens, the stream and the connection pool (the token stays valid: call ``logout`` to revoke
        it)."""
        for screen in list(self._screens):
            await screen.close()
        if self.stream is not None:
            await self.stream.stop()
            self.stream = None
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._owns_http:
            await self.http.aclose()
