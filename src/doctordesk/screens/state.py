"""State tokens, the page cache and the change check that make an unchanged poll cheap.

A state token is ``{epoch}.{stamp}.{issued}.{language}.{hash}.{until}.{seal}``: the process epoch, the sum of the
revision counters of the topics the screen shows, when it was issued (unix seconds), the language it was rendered
in, the page's content hash, until when time alone leaves the page as it is (unix seconds, ``0``: no moment does;
the render says, ``lasting``), and a seal binding all of it to the viewer it was issued to and the screen it was
issued for (an HMAC with a key of the process over the other parts, the user id, the role and the screen's topics).
A token that another viewer was given — another user, or the same user in another role — or for another screen
(another appointment's chat, say), or that was changed is no token at all: the poll renders the screen again and
answers with a reset (no "unchanged", no diff from a page the caller never saw). A poll whose epoch, stamp and
language still match, whose ``until`` has not come and that is younger than ``max_age`` (a safety net, far longer
than a poll interval) is answered with an empty update set without touching the database; a client that changed its
language gets the page in the new one (patches from the old page, which the content hash names). Otherwise the
screen is rendered again and diffed against the cached old page (or reset when the old page is unknown, e.g. after a
restart or on another instance).

Marks are set by domain events from the bus after commit. When the bus may have lost events (it reconnects),
the process starts a new epoch (``invalidate``) or adopts the shared bus's (``adopt``), so every token fails the
cheap check once. Processes on one shared bus share the epoch, the marks and the seal's key: any of them answers
another's token from memory (``Revisions``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from doctordesk import i18n
from doctordesk.domain.roles import Actor
from doctordesk.screens.hashing import Parts, content_hash
from doctordesk.screens.page_caches import PageCache, PatchCache, SharedRenders
from doctordesk.screens.protocol import Page, diff, p_reset

Render = Callable[[], Awaitable[Page]]
SEAL_CHARS = 24  # hex digits of the HMAC kept: 96 bits
# How long a page whose render did not say when time changes it (``Page.timed`` false) is trusted, at most.
UNTIMED_SECONDS = 60
# A topic's mark is forgotten (counts as never changed) once its last event is this old: twice the longest safety
# net the settings allow, so no token that could still be current was issued before that event. The marks kept
# (here, in Redis, in the broker) are then those of the topics changed within it.
KEEP_MARKS_SECONDS = 2 * 86400


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking at a screen: the client (tab or app) and its user. Real-time routing keys presence on it."""

    client_id: str | None
    user_id: int
    role: str  # the actor's role: a state token is bound to the user and the role

    @classmethod
    def of(cls, actor: Actor, client_id: str | None = None) -> Viewer:
        """The actor viewing through the client ``client_id``."""
        return cls(client_id, actor.user_id, actor.role.value)

    @property
    def bound_to(self) -> str:
        """What a state token is bound to."""
        return f"{self.user_id}:{self.role}"


@dataclass(frozen=True, slots=True)
class Shown:
    """What a screen is to polling and real-time routing: its name, its poll endpoint (the page's ``poll``) and the
    topics it shows. Each screen module builds its own (``shown(...)``).

    ``repeatable``: the screen's unchanged poll depends on nothing but its viewer (the actor) and the state token:
    no read and no check that could turn out otherwise while the topics stand still. Such an answer may be given
    again from memory (``Unchanged``, ``web/unchanged_polls.py``)."""

    screen: str
    poll: str
    topics: tuple[str, ...]
    repeatable: bool = False


@dataclass(frozen=True, slots=True)
class Token:
    """A state token's parts."""

    epoch: str
    stamp: int
    issued: int
    language: str
    content: str  # the page's content hash
    until: int = 0  # unix seconds from which time alone may change the page (0: no moment does)
    seal: str = ""  # binds the other parts to the viewer (``ScreenStates.read``)

    @classmethod
    def parse(cls, token: str | None) -> Token | None:
        """The parts of a well-formed token (None for anything else); its seal is not checked here."""
        parts = token.split(".") if token else []
        if len(parts) != 7:
            return None
        try:
            return cls(parts[0], int(parts[1]), int(parts[2]), parts[3], parts[4], int(parts[5]), parts[6])
        except ValueError:
            return None

    @property
    def sealed(self) -> str:
        """The parts the seal covers."""
        return f"{self.epoch}.{self.stamp}.{self.issued}.{self.language}.{self.content}.{self.until}"

    def __str__(self) -> str:
        return f"{self.sealed}.{self.seal}"


@dataclass(frozen=True, slots=True)
class Unchanged:
    """An unchanged poll's answer on a ``repeatable`` screen: ``viewer`` was told that nothing ``shown`` shows
    changed since ``token`` (the screen's own token, inside whatever the screen's service wraps around it). While
    ``ScreenStates.unchanged`` holds for it, the same poll from the same actor gets the same answer."""

    viewer: Viewer
    shown: Shown
    token: str


# The unchanged answer a request gave, for the web layer that may repeat it (set by ``Viewing.poll``).
unchanged_answer: ContextVar[Unchanged | None] = ContextVar("doctordesk_unchanged_answer", default=None)


# The requesting client's id (``X-Client-Id``: one per tab instance of the web app), set with the screen request.
# Review and Approve tells "restored" unsent changes from the ones this very tab just made by it.
current_client: ContextVar[str | None] = ContextVar("doctordesk_current_client", default=None)


@dataclass(frozen=True, slots=True)
class Revision:
    """Where a screen's topics stood (``epoch``, ``stamp``) and the number of the last event marked here
    (``sequence``), read before anything a page shows is read (``ScreenStates.revision``)."""

    epoch: str
    stamp: int
    sequence: int


class ShownListener(Protocol):
    """Told whenever a viewer is handed a screen: ``opened`` for its page (PUT), else for its poll's answer
    (presence listens here). Runs on every poll: it must return at once, without I/O, when it has nothing new."""

    def __call__(self, viewer: Viewer, shown: Shown, *, opened: bool) -> None: ...


class Revisions:
    """Per-topic change marks: the sequence number of the last event on each topic. A screen's stamp is the
    highest mark among its topics, so any event on one of them raises it.

    On one process the sequence is this process's own count. Processes sharing a bus (``realtime/shared.py``)
    take the bus's sequence instead, numbered in one place after commit, and ``adopt`` its epoch and marks when
    they (re)join it: then a token issued by one process is judged the same way by every other. A page rendered
    after its process learned of sequence number n shows every event numbered below n (each was committed before
    it was numbered), so a token whose marks another process still finds current names a page showing everything
    that process has seen on those topics.

    A mark whose event is older than ``keep`` seconds is forgotten (``KEEP_MARKS_SECONDS``; swept here every
    eighth of it, in Redis and the broker as events come). Sound: a token is current only while younger than the
    max age, far less than ``keep``, and an event that makes it stale came after it was issued, so its mark is
    younger than the token and kept while the token could pass. A token whose stamp came from a forgotten mark
    renders once more; processes forgetting at slightly different moments only cost such renders."""

    def __init__(self, *, keep: float = KEEP_MARKS_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._marks: dict[str, int] = {}
        self._changed: dict[str, float] = {}  # when each kept mark was set here (``clock``)
        self._seq = 0
        self._keep, self._clock = keep, clock
        self._next_sweep = clock() + keep / 8
        self.epoch = secrets.token_hex(4)

    def bump(self, topics: Iterable[str], seq: int | None = None) -> None:
        """Mark an event on ``topics``: numbered ``seq`` by a shared bus, else by this process's own count."""
        if seq is None:
            seq = self._seq + 1
        self._seq = max(self._seq, seq)
        now = self._clock()
        for t in topics:
            if self._marks.get(t, 0) < seq:
                self._marks[t] = seq
                self._changed[t] = now
        if now >= self._next_sweep:
            self.sweep(now)

    def stamp(self, topics: Iterable[str]) -> int:
        return max([self._marks.get(t, 0) for t in topics], default=0)

    def sweep(self, now: float) -> None:
        """Forget the marks set more than ``keep`` seconds before ``now``."""
        old = now - self._keep
        for t in [t for t, at in self._changed.items() if at < old]:
            del self._marks[t], self._changed[t]
        self._next_sweep = now + self._keep / 8

    @property
    def marks(self) -> dict[str, int]:
        """The marks kept, by topic (read only)."""
        return self._marks

    @property
    def sequence(self) -> int:
        """The number of the last event marked here."""
        return self._seq

    def invalidate(self) -> None:
        """A new epoch of this process alone: every token issued so far fails the cheap check once."""
        self.epoch = secrets.token_hex(4)

    def adopt(self, epoch: str, marks: dict[str, int], seq: int) -> None:
        """Take a shared bus's epoch and marks as they stand at its number ``seq`` (on joining it)."""
        self.epoch = epoch
        self._marks = dict(marks)
        now = self._clock()  # set at most ``keep`` ago on the bus: kept here from now, later than needed, never sooner
        self._changed = dict.fromkeys(marks, now)
        self._seq = seq


def lasting(page: Page, moment: datetime | None) -> Page:
    """``page``, marked by its render as unchanged by time alone until ``moment`` (None: ever; the moments are the
    domain's: ``domain/edges.py``). The state token keeps it; a page not marked holds ``UNTIMED_SECONDS``."""
    page.until = (moment,)
    return page


def until_of(page: Page, now: float) -> int:
    """A new token's ``until`` for ``page`` rendered at ``now``: the page's own moment (``lasting``), rounded
    down to the second so the token never outlives it; ``UNTIMED_SECONDS`` on when the render did not say."""
    if page.until is None:
        return int(now) + UNTIMED_SECONDS
    moment = page.until[0]
    return 0 if moment is None else max(math.floor(moment.timestamp()), 1)


class ScreenStates:
    """Issues state tokens, keeps the pages handed out and tells listeners who was shown which screen; one per
    process, shared by every screen (each request's screen is a ``screens.viewing.Viewing``).

    The revision stamp is read *before* the screen is rendered: an event that lands while rendering makes the
    next poll render again instead of being missed.
    """

    def __init__(
        self, revisions: Revisions, *, max_age: int = 60, cache_size: int = 4096, poll_renders: int = 0
    ) -> None:
        self.revisions = revisions
        # At most this many polls of this process render at once (0: no bound); a page (PUT) and the answer to an
        # action never wait for it (``page``'s ``lane``; docs/operations.md#poll-renders).
        self.poll_lane = asyncio.Semaphore(poll_renders) if poll_renders else None
        self.on_lane_wait: Callable[[], None] = lambda: None  # told of each poll that found the lane full
        self.cache = PageCache(cache_size)
        self.max_age = max_age
        self.listeners: list[ShownListener] = []
        self.shared: SharedRenders[Token] = SharedRenders()
        self.patches = PatchCache()
        # Tokens are this process's, unless it shares a bus that hands every process one key (``share_key``).
        self._key = secrets.token_bytes(32)

    def share_key(self, key: bytes) -> None:
        """Seal with ``key``, the one every process on the shared bus uses: their tokens are then each other's."""
        self._key = key

    def _seal(self, token: Token, viewer: Viewer, topics: Iterable[str]) -> Token:
        message = f"{viewer.bound_to}|{','.join(topics)}|{token.sealed}".encode()
        seal = hmac.new(self._key, message, hashlib.sha256).hexdigest()[:SEAL_CHARS]
        return Token(token.epoch, token.stamp, token.issued, token.language, token.content, token.until, seal)

    def read(self, token: str | None, viewer: Viewer, topics: Iterable[str]) -> Token | None:
        """The parts of a token issued to ``viewer`` by this process for the screen showing ``topics``; None for
        anything else (another viewer's token, another screen's, a changed one, another instance's, a malformed
        one). So an unchanged answer vouches for what the page's render checked (that the viewer may see it) as long
        as a change of that is an event on the screen's topics."""
        parsed = Token.parse(token)
        if parsed is None or not hmac.compare_digest(self._seal(parsed, viewer, topics).seal, parsed.seal):
            return None
        return parsed

    def cached(
        self, token: str | None, viewer: Viewer, topics: Iterable[str]
    ) -> tuple[list[dict[str, Any]], Parts | None] | None:
        """The page ``token`` names, when it was handed to ``viewer`` for the screen showing ``topics`` and is
        still cached."""
        parsed = self.read(token, viewer, topics)
        return self.cache.entry(parsed.content) if parsed is not None else None

    def shown_to(self, viewer: Viewer, shown: Shown, *, opened: bool) -> None:
        """Tell the listeners which screen ``viewer`` was just handed: its page (``opened``) or a poll's answer."""
        for listener in self.listeners:
            listener(viewer, shown, opened=opened)

    async def page(
        self,
        topics: Iterable[str],
        now: float,
        render: Render,
        *,
        viewer: Viewer,
        shares: Hashable | None = None,
        lane: bool = False,
    ) -> Page:
        """Render a page and give it its state token, bound to ``viewer``.

        ``shares``: everything the render reads besides the screen's topics and the clock (the actor, the screen's
        windows, filter, layout, ...), when the caller knows it. Then a page rendered for the same viewer (user and
        role), in the same language, for the same ``shares``, at the same revision of the topics and still current
        by its token (``current``: not past its ``until``, younger than the max age) is handed out again instead of
        rendering: it is what the render would show, by the same rule that lets an unchanged poll skip it. Its
        token keeps that render's issue time and is sealed for this ``viewer`` (each client's token stays bound to
        its viewer; another user or role never shares, as the viewer is part of the key). A poll that finds such a
        render under way waits for it rather than rendering beside it (a real-time message sends all the viewer's
        clients to poll at once).

        ``lane``: a poll's render, which waits its turn in ``poll_lane`` (a shared render is waited for outside it)."""
        topics = tuple(topics)
        epoch, stamp = self.revisions.epoch, self.revisions.stamp(topics)
        key = (shares, viewer.bound_to, topics, i18n.current()) if shares is not None else None
        if key is None:
            return self._sealed(await self._render(render, epoch, stamp, now, lane=lane), viewer, topics)
        known = await self._shared(key, epoch, stamp, now)
        if known is not None:
            return self._sealed((known[0], replace(known[1])), viewer, topics)
        done, result = self.shared.begin(key, (epoch, stamp)), None
        try:
            token, page = await self._render(render, epoch, stamp, now, lane=lane)
            result = (token, page.json_only())  # kept until the next render: its JSON is all a shared answer reads
            self.shared.put(key, *result)
        finally:
            self.shared.end(key, done, result)
        return self._sealed((token, page), viewer, topics)

    async def _render(
        self, render: Render, epoch: str, stamp: int, now: float, *, lane: bool = False
    ) -> tuple[Token, Page]:
        if lane and self.poll_lane is not None:
            if self.poll_lane.locked():
                self.on_lane_wait()
            async with self.poll_lane:
                page = await render()
        else:
            page = await render()
        content_hash = page.content_hash()
        self.cache.put(content_hash, page.elements_json())
        return Token(epoch, stamp, int(now), i18n.current(), content_hash, until_of(page, now)), page

    def _sealed(self, rendered: tuple[Token, Page], viewer: Viewer, topics: tuple[str, ...]) -> Page:
        token, page = rendered
        page.state = str(self._seal(token, viewer, topics))
        return page

    async def _shared(self, key: Hashable, epoch: str, stamp: int, now: float) -> tuple[Token, Page] | None:
        """The shared render of ``key`` that is current at ``stamp`` and ``now``: kept, or under way (waited for)."""
        known = self.shared.get(key)
        if known is not None and self.current(known[0], stamp, now):
            return known
        under_way = self.shared.under_way(key, (epoch, stamp))
        if under_way is not None:
            known = await asyncio.shield(under_way)
            if known is not None and self.current(known[0], stamp, now):
                return known
        return None

    def unchanged(self, token: str | None, topics: Iterable[str], now: float, *, viewer: Viewer) -> bool:
        """True when ``token`` was issued to ``viewer`` and nothing the screen shows can have changed since
        (no I/O)."""
        topics = tuple(topics)
        parsed = self.read(token, viewer, topics)
        return parsed is not None and self.current(parsed, self.revisions.stamp(topics), now)

    def current(self, token: Token, stamp: int, now: float) -> bool:
        """True when ``token`` is this process's, in the reader's language, young enough, and the screen's topics
        stood at ``stamp`` when it was issued."""
        return token.epoch == self.revisions.epoch and token.stamp == stamp and self.young(token, now)

    def young(self, token: Token, now: float) -> bool:
        """True when ``token``'s page is in the reader's language, younger than ``max_age`` and time alone has not
        changed it yet (its ``until`` is ahead)."""
        return (
            token.language == i18n.current()
            and 0 <= now - token.issued < self.max_age
            and (token.until == 0 or now < token.until)
        )

    def revision(self, topics: Iterable[str]) -> Revision:
        """Where the topics stand now: read before reading what a page will show."""
        return Revision(self.revisions.epoch, self.revisions.stamp(topics), self.revisions.sequence)

    def follow(
        self,
        token: Token,
        *,
        viewer: Viewer,
        topics: Iterable[str],
        revision: Revision,
        screen: str,
        title: str,
        poll: str,
        elements: list[Any],
        parts: Parts | None = None,
        own_events: int = 0,
    ) -> str:
        """The state token of a page made from the one ``token`` names (a screen's answer to an action, built
        without rendering the screen again), showing everything up to ``revision``. It keeps ``token``'s issue
        time and ``until``, so it ages as that page does (what the action added changes with time no sooner than
        what the page showed). The page is cached like a rendered one, with ``parts`` (the canonical
        JSON of some of its elements) for the next page made from it.

        ``own_events``: the page also shows what the action itself published (a chat send's message), marked here
        since ``revision``. The stamp then covers them when exactly they were marked since and nothing else was
        (the topics' stamp now); otherwise it stays ``revision``'s, so the next poll renders. A token never
        vouches for an event its page may not show."""
        content = content_hash(screen, title, poll, elements, parts=parts)
        self.cache.put(content, elements, parts)
        topics = tuple(topics)
        stamp = revision.stamp
        marks = self.revisions
        if marks.epoch == revision.epoch and marks.sequence == revision.sequence + own_events:
            stamp = marks.stamp(topics)  # nothing but the action's own events since: the page shows all of them
        new = Token(revision.epoch, stamp, token.issued, token.language, content, token.until)
        return str(self._seal(new, viewer, topics))

    def patches_from(
        self, token: str | None, page: Page, *, viewer: Viewer, topics: Iterable[str]
    ) -> list[dict[str, Any]]:
        """Patches from the page named by ``token`` to ``page`` (a reset when the old page is not known, or was not
        handed to ``viewer`` for the screen showing ``topics``)."""
        old_token, new_token = self.read(token, viewer, topics), Token.parse(page.state)
        if old_token is not None and new_token is not None and old_token.content == new_token.content:
            return []
        old = self.cache.get(old_token.content) if old_token is not None else None
        if old is None or old_token is None:
            return [p_reset(page.elements_json())]
        if new_token is None:
            return diff(old, page.elements_json())
        return self.patches.diff(old_token.content, old, new_token.content, page.elements_json())
