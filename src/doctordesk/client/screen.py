"""One screen held by the SDK: the current page, kept in sync by polling, real-time messages and actions.

A ``Screen`` is like a browser tab showing the service's screens: ``client.open(endpoint)`` PUTs the first page;
update sets from polls, real-time PATCHes and actions are applied to it with the protocol's own ``apply``; an
update set that navigates (after a decision, the list) or asks for a reload replaces the page in the same object.
Every change is announced to ``changes()`` iterators and ``on_change`` callbacks.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from doctordesk.client import forms
from doctordesk.client.changes import Change, Changes, Trigger
from doctordesk.client.errors import ClientError, ProtocolError, ServiceBusy
from doctordesk.client.forms import FileUpload
from doctordesk.client.host import ScreenHost
from doctordesk.client.page_inputs import PageInputs
from doctordesk.client.timers import TimerHandle
from doctordesk.screens.protocol import PatchError, apply

log = logging.getLogger(__name__)

Callback = Callable[[Change], Awaitable[None] | None]
Confirm = Callable[[str], bool]

# A user's action answered 503 SERVICE_BUSY changed nothing: it is sent again after its Retry-After (at most
# BUSY_WAIT_MAX seconds), this many times, before ``ServiceBusy`` reaches the caller (docs/protocol.md#busy).
ACTION_BUSY_RETRIES = 2
BUSY_WAIT_MAX = 5.0


async def again_when_busy(send: Callable[[], Awaitable[Change | None]], what: str) -> Change | None:
    """``send()``, sent again after a busy answer's Retry-After (``ACTION_BUSY_RETRIES`` times at most)."""
    retries_left = ACTION_BUSY_RETRIES
    while True:
        try:
            return await send()
        except ServiceBusy as exc:
            if retries_left == 0:
                raise
            retries_left -= 1
            wait = min(exc.retry_after or 1.0, BUSY_WAIT_MAX)
            log.info("%s: service busy, sent again in %g s", what, wait)
            await asyncio.sleep(wait)


class ElementDisabled(ClientError):
    """The element is disabled (or has no action): the screen does not offer this now."""


class ScreenClosed(ClientError):
    """The screen was closed (by ``close()`` or a logout)."""


class Screen(PageInputs):
    """The page a client shows, in sync with the service. Create it with ``await client.open(endpoint)``.

    Page fields: ``name`` (the screen, e.g. ``appointment-list``), ``title``, ``endpoint`` (its PUT), ``poll_endpoint``
    (its PATCH poll), ``timeout`` (seconds between polls), ``layout``, ``state`` (the token sent back on PATCH) and
    ``elements`` (the JSON element tree of docs/protocol.md, with the values set locally).
    """

    def __init__(self, client: ScreenHost, page: dict[str, Any]) -> None:
        self.client = client
        self.name = ""
        self.title = ""
        self.endpoint = ""
        self.poll_endpoint = ""
        self.timeout = 30.0
        self.layout = "desktop"
        self.state = ""
        self.elements: list[dict[str, Any]] = []
        self.notices: list[dict[str, str]] = []
        self.closed = False
        self.last_error: ClientError | None = None
        self.polled_at: float | None = None  # monotonic time of the last completed poll
        self._files: dict[str, FileUpload] = {}
        self._edited: set[str] = set()  # ids of inputs whose value was set locally since the page arrived
        self._queues: list[asyncio.Queue[Change]] = []
        self._callbacks: list[Callback] = []
        self._lock = asyncio.Lock()
        self._timer: TimerHandle | None = None
        self._busy_answers = 0  # polls answered "busy" in a row (SERVICE_BUSY with Retry-After)
        self._load(page)

    def __repr__(self) -> str:
        return f"<Screen {self.name} {self.endpoint} state={self.state[:16]}>"

    # --- acting (reading the page and setting its inputs: PageInputs) --------------------------------------

    async def fill(self, name_or_id: str, value: str | int | bool | FileUpload | None) -> Change | None:
        """Set an input's value and, when the input has an action of its own (the service validates fields as
        they change, e.g. a Suggested Scheduling card), perform it as a UI does on a change event."""
        self.set_value(name_or_id, value)
        target = forms.find_input(self.elements, name_or_id)
        if target is None or not isinstance(target.get("action"), dict):
            return None
        return await self.activate(target["id"])

    async def activate(self, element_id: str, *, confirm: Confirm | None = None, force: bool = False) -> Change | None:
        """Perform the element's action as a click would: collect its form, send it, apply the answer.

        A PUT action replaces the page (use ``client.open`` for a second screen). When the action asks a
        confirmation, ``confirm(question)`` decides (no callback: confirmed); a refusal sends nothing and returns
        None. Disabled elements raise ``ElementDisabled`` unless ``force``, and so does an element whose
        ``props.requires_one_of`` inputs are all empty (Send with no text and no file: no request is sent). Error
        answers raise ``ApiError``; a busy one is first sent again (``again_when_busy``), as the web client does.
        """
        target = self.element(element_id)
        action = target.get("action")
        if not isinstance(action, dict):
            raise ElementDisabled(f"{element_id!r} has no action")
        if not force and not target.get("enabled", True):
            raise ElementDisabled(f"{element_id!r} is disabled")
        if not force and self._missing_required(target):
            raise ElementDisabled(f"{element_id!r} needs one of {target['props']['requires_one_of']} filled in")
        question = action.get("confirm")
        if question and confirm is not None and not confirm(str(question)):
            return None
        method = str(action["method"]).upper()
        endpoint = str(action["endpoint"])
        if method == "PUT":
            return await self.navigate(endpoint, trigger="action")
        data, files = forms.collect(self.elements, action.get("form"), self._files)
        change = await again_when_busy(
            lambda: self._exchange(method, endpoint, data=data, files=files, trigger="action"), f"{method} {endpoint}"
        )
        for name in files:
            self._files.pop(name, None)
        return change

    async def patch(self, endpoint: str | None = None) -> Change | None:
        """PATCH ``endpoint`` (default: the poll endpoint) and apply the answer; the poll timer is left alone
        (spec 6.1 rule 3). Returns the change, or None when nothing changed."""
        return await self._exchange("PATCH", endpoint or self.poll_endpoint, trigger="patch")

    async def poll(self, *, trigger: Trigger = "poll") -> Change | None:
        """Poll now: cancel the poll timer, PATCH the poll endpoint, apply, and restart the timer at the timeout
        the answer carries. Returns the change, or None when nothing changed.
        A busy service's answer (503 SERVICE_BUSY with ``Retry-After``) raises ``ServiceBusy`` and the next poll
        comes after the time it states instead of the timeout."""
        self.cancel_timer()
        retry_after: float | None = None
        try:
            change = await self._exchange("PATCH", self.poll_endpoint, trigger=trigger)
            self._busy_answers = 0
            return change
        except ServiceBusy as exc:
            self._busy_answers += 1
            retry_after = exc.retry_after
            raise
        finally:
            self.polled_at = time.monotonic()
            self._schedule(retry_after)

    async def reload(self) -> Change | None:
        """PUT the screen's endpoint again and replace the page."""
        return await self.navigate(self.endpoint, trigger="reload")

    async def reannounce(self) -> Change | None:
        """PUT the screen again so the service knows which screen this client shows (after a reconnect: its
        presence does not survive a restart), keeping the values typed locally into inputs that are still there."""
        typed = {i: self.find(i) for i in self._edited}
        files = dict(self._files)
        change = await self.reload()
        for element_id, before in typed.items():
            after = self.find(element_id)
            if before is not None and after is not None and after.get("name") == before.get("name"):
                name = str(after.get("name") or element_id)
                self.set_value(element_id, files[name] if name in files else before.get("value"))
        return change

    async def navigate(self, endpoint: str, *, trigger: Trigger = "navigate") -> Change | None:
        """Show another screen in this one: PUT ``endpoint`` and replace the page."""
        return await self._exchange("PUT", endpoint, trigger=trigger)

    async def close(self) -> None:
        """Stop syncing this screen and end its change iterators."""
        if self.closed:
            return
        self.closed = True
        self.cancel_timer()
        self.client._forget(self)
        self._emit([Change("closed", self.name, "close")])

    # --- observing -------------------------------------------------------------------------------------------

    def changes(self) -> Changes:
        """``async for change in screen.changes()``: every change from now on, until the screen closes."""
        return Changes(self)

    def on_change(self, callback: Callback) -> Callable[[], None]:
        """Call ``callback(change)`` on every change (coroutines run as tasks); returns the unsubscribe function."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    async def wait_for(self, predicate: Callable[[Screen], bool], *, timeout: float = 5.0) -> None:
        """Wait until ``predicate(screen)`` holds (checked now and after every change); ``TimeoutError`` if it does
        not within ``timeout`` seconds."""
        stream = self.changes()
        try:
            async with asyncio.timeout(timeout):
                while not predicate(self):
                    change = await anext(stream)
                    if change.kind == "closed":
                        raise ScreenClosed(f"{self.name} closed while waiting")
        finally:
            stream.close()

    # --- the sync engine's side ------------------------------------------------------------------------------

    def cancel_timer(self) -> None:
        """Cancel the pending poll timer (spec 6.1 rule 1)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self, retry_after: float | None = None) -> None:
        self.cancel_timer()
        if not self.closed:
            delay = max(float(self.timeout), self.client.min_poll_seconds)
            if retry_after is not None and retry_after > 0:
                delay = max(retry_after, self.client.min_poll_seconds)  # the busy service's stated time
            self._timer = self.client.scheduler.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.client._spawn(self.poll_in_background("poll"))

    async def poll_in_background(self, trigger: Trigger) -> None:
        """Poll, turning a failure into an ``error`` change instead of an exception (the cycle goes on)."""
        try:
            await self.poll(trigger=trigger)
        except ServiceBusy as exc:
            if exc.retry_after and self._busy_answers == 1:
                # One busy answer is the service asking to come back shortly: the poll is sent again at its
                # stated time, and nothing is shown; a second in a row is an error change like any other.
                log.info("poll of %s: service busy, again in %g s", self.name, exc.retry_after)
                return
            self._background_error(exc, trigger)
        except ClientError as exc:
            self._background_error(exc, trigger)

    async def patch_in_background(self, endpoint: str, trigger: Trigger) -> None:
        """PATCH ``endpoint`` for a real-time message, turning a failure into an ``error`` change."""
        try:
            await self._exchange("PATCH", endpoint, trigger=trigger)
        except ClientError as exc:
            self._background_error(exc, trigger)

    def _background_error(self, exc: ClientError, trigger: Trigger) -> None:
        if self.closed:
            return
        self.last_error = exc
        log.info("%s of %s failed: %s", trigger, self.name, exc)
        self._emit([Change("error", self.name, trigger, error=exc)])

    async def _exchange(
        self,
        method: str,
        endpoint: str,
        *,
        trigger: Trigger,
        data: dict[str, str] | None = None,
        files: forms.FormFiles | None = None,
    ) -> Change | None:
        if self.closed:
            raise ScreenClosed(f"{self.name} is closed")
        changes: list[Change] = []
        async with self._lock:
            body = await self.client.request(
                method, endpoint, state=None if method == "PUT" else self.state, data=data, files=files
            )
            await self._take(body, trigger, changes)
        self._emit(changes)
        return changes[-1] if changes else None

    async def _take(self, body: Any, trigger: Trigger, changes: list[Change]) -> None:
        """Apply an answer (page or update set); follow ``navigate`` and ``reload``. Runs under the lock."""
        kind = body.get("kind") if isinstance(body, dict) else None
        if kind == "page":
            self._load(body)
            changes.append(Change("page", self.name, trigger))
            self._schedule()  # a new page brings its own timeout
            return
        if kind != "update":
            raise ProtocolError(f"expected a page or an update set, got {str(body)[:200]!r}")
        patches = body.get("patches") or []
        if patches:
            try:
                self.elements = apply(self.elements, patches)
            except (PatchError, KeyError, StopIteration, IndexError, TypeError) as exc:
                # The local page and the service disagree: a fresh page is the way back.
                log.warning("patches did not apply to %s (%s): reloading", self.name, exc)
                await self._take(await self._put(self.endpoint), "reload", changes)
                return
        self.state = str(body.get("state") or self.state)
        if body.get("timeout") is not None:
            self.timeout = float(body["timeout"])
        notice = body.get("notice")
        if isinstance(notice, dict):
            self.notices.append(notice)
        navigate = body.get("navigate")
        if patches or notice or navigate or body.get("reload"):
            changes.append(
                Change(
                    "update",
                    str(body.get("screen") or self.name),
                    trigger,
                    patches=tuple(patches),
                    notice=notice if isinstance(notice, dict) else None,
                    navigate=navigate if isinstance(navigate, str) else None,
                )
            )
        if isinstance(navigate, str):
            await self._take(await self._put(navigate), "navigate", changes)
        elif body.get("reload"):
            await self._take(await self._put(self.endpoint), "reload", changes)

    async def _put(self, endpoint: str) -> Any:
        return await self.client.request("PUT", endpoint)

    def _load(self, page: dict[str, Any]) -> None:
        self.name = str(page.get("screen", ""))
        self.title = str(page.get("title", ""))
        self.endpoint = str(page.get("endpoint", ""))
        self.poll_endpoint = str(page.get("poll") or self.endpoint)
        self.timeout = float(page.get("timeout") or 30)
        self.layout = str(page.get("layout", self.layout))
        self.state = str(page.get("state", ""))
        elements = page.get("elements")
        if not isinstance(elements, list):
            raise ProtocolError("a page without an element list")
        self.elements = elements
        self._files.clear()
        self._edited.clear()

    def _emit(self, changes: list[Change]) -> None:
        for change in changes:
            for queue in list(self._queues):
                queue.put_nowait(change)
            for callback in list(self._callbacks):
                try:
                    result = callback(change)
                except Exception:  # an integrator's bug must not stop the sync
                    log.exception("change callback failed")
                    continue
                if inspect.isawaitable(result):
                    self.client._spawn(_await(result))


async def _await(result: Awaitable[None]) -> None:
    try:
        await result
    except Exception:
        log.exception("change callback failed")
