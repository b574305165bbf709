"""What a process keeps of the pages it handed out, for ``ScreenStates`` (``screens/state.py``): the pages by content
hash (a changed poll is diffed against the client's page), the last poll render of each viewer's screen (shared by
that viewer's clients) and the patches between two pages (diffed once for all the clients that showed the same)."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from doctordesk.screens.hashing import Parts
from doctordesk.screens.protocol import Page, diff

Token = TypeVar("Token")  # a state token's parts (``state.Token``), kept with the page they name


class PageCache:
    """The last pages handed out, by content hash, so a changed poll can be answered with a diff; with a page
    made from another, the canonical JSON of the elements it was made of (``protocol.content_hash``'s parts)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._pages: OrderedDict[str, tuple[list[dict[str, Any]], Parts | None]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: str, elements: list[dict[str, Any]], parts: Parts | None = None) -> None:
        with self._lock:
            self._pages[key] = (elements, parts)
            self._pages.move_to_end(key)
            while len(self._pages) > self._size:
                self._pages.popitem(last=False)

    def get(self, key: str) -> list[dict[str, Any]] | None:
        found = self.entry(key)
        return found[0] if found is not None else None

    def entry(self, key: str) -> tuple[list[dict[str, Any]], Parts | None] | None:
        """The page and its parts (None: not known)."""
        with self._lock:
            entry = self._pages.get(key)
            if entry is not None:
                self._pages.move_to_end(key)
            return entry


class SharedRenders(Generic[Token]):
    """The last poll render of each screen as one viewer sees it (``ScreenStates.page``'s ``shares``): the page and
    its token's parts before the seal, by what the render read besides the topics and the clock. The same viewer's
    other clients (devices, tabs) polling at the same revision are answered from it instead of rendering again."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._pages: OrderedDict[Hashable, tuple[Token, Page]] = OrderedDict()
        self._lock = threading.Lock()
        # Renders under way, by key: the revision they render at and what they will hand out (None: they failed).
        self._rendering: dict[Hashable, tuple[tuple[str, int], asyncio.Future[tuple[Token, Page] | None]]] = {}

    def begin(self, key: Hashable, revision: tuple[str, int]) -> asyncio.Future[tuple[Token, Page] | None]:
        """Mark a render of ``key`` at ``revision`` under way: polls of the key at that revision wait for it."""
        done: asyncio.Future[tuple[Token, Page] | None] = asyncio.get_running_loop().create_future()
        self._rendering[key] = (revision, done)
        return done

    def end(
        self, key: Hashable, done: asyncio.Future[tuple[Token, Page] | None], result: tuple[Token, Page] | None
    ) -> None:
        """The render ``begin`` marked is over (``result`` None: it failed or was cancelled; the waiting polls
        render for themselves)."""
        if not done.done():
            done.set_result(result)
        if self._rendering.get(key, (None, None))[1] is done:
            del self._rendering[key]

    def under_way(self, key: Hashable, revision: tuple[str, int]) -> asyncio.Future[tuple[Token, Page] | None] | None:
        """The render of ``key`` at ``revision`` under way in this event loop, if any."""
        found = self._rendering.get(key)
        if found is None or found[0] != revision or found[1].get_loop() is not asyncio.get_running_loop():
            return None
        return found[1]

    def put(self, key: Hashable, token: Token, page: Page) -> None:
        with self._lock:
            self._pages[key] = (token, page)
            self._pages.move_to_end(key)
            while len(self._pages) > self._size:
                self._pages.popitem(last=False)

    def get(self, key: Hashable) -> tuple[Token, Page] | None:
        with self._lock:
            return self._pages.get(key)


class PatchCache:
    """The patches from one cached page to another, by the two content hashes: clients showing the same page get
    the same patches to the same new page, so a change seen by many clients of one viewer is diffed once."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._patches: OrderedDict[tuple[str, str], list[dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def diff(self, old_hash: str, old: list[dict[str, Any]], new_hash: str, new: list[dict[str, Any]]) -> list[Any]:
        """``diff(old, new)``, from memory when these two pages were diffed before (a new list each time)."""
        key = (old_hash, new_hash)
        with self._lock:
            known = self._patches.get(key)
        if known is None:
            known = diff(old, new)
            with self._lock:
                self._patches[key] = known
                while len(self._patches) > self._size:
                    self._patches.popitem(last=False)
        return list(known)
