"""One viewer viewing one screen: the page of its PUT, the update set of its poll and the update set after an
action, all from one description (who looks, which screen, its poll interval, how it renders).

The service that owns a screen builds a ``Viewing`` per request and calls one of the three; the state tokens and
the page cache are ``ScreenStates``'s (``screens/state.py``). The page and the poll tell ``ScreenStates``'s
listeners which screen the viewer was handed (presence, docs/realtime.md), so a service that restarted learns a
client's screen from its next poll. An unchanged poll stays what it was: no rendering and no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from doctordesk.screens.protocol import Page, UpdateSet
from doctordesk.screens.state import Render, ScreenStates, Shown, Unchanged, Viewer, unchanged_answer


@dataclass(frozen=True, slots=True)
class Viewing:
    states: ScreenStates
    now: float  # unix seconds of the request (the runtime's clock)
    viewer: Viewer
    shown: Shown
    timeout: int  # the screen's poll interval, seconds
    render: Render
    # Everything the render reads besides the topics and the clock, when the screen can say (``ScreenStates.page``):
    # then the same viewer's clients polling at the same revision share one render. Only polls share: a page (PUT)
    # and the answer to an action render afresh, as they may follow a change whose event is still on its way.
    shares: Hashable | None = None

    async def page(self) -> Page:
        """The whole page, with its state token (PUT)."""
        page = await self.states.page(self.shown.topics, self.now, self.render, viewer=self.viewer)
        self.states.shown_to(self.viewer, self.shown, opened=True)
        return page

    async def poll(self, token: str | None) -> UpdateSet:
        """What changed since the client's page (named by ``token``): empty, without rendering, when nothing the
        screen shows can have changed."""
        if token and self.states.unchanged(token, self.shown.topics, self.now, viewer=self.viewer):
            update = UpdateSet(screen=self.shown.screen, state=token, timeout=self.timeout)
            if self.shown.repeatable:
                unchanged_answer.set(Unchanged(self.viewer, self.shown, token))
        else:
            update = await self._rendered(token, shares=self.shares, lane=True)
        self.states.shown_to(self.viewer, self.shown, opened=False)
        return update

    async def refresh(self, token: str | None) -> UpdateSet:
        """The screen rendered now as patches to the client's page (a reset when that page is not known): the
        answer to an action on the screen."""
        return await self._rendered(token, shares=None)

    async def _rendered(self, token: str | None, *, shares: Hashable | None, lane: bool = False) -> UpdateSet:
        page = await self.states.page(
            self.shown.topics, self.now, self.render, viewer=self.viewer, shares=shares, lane=lane
        )
        return UpdateSet(
            screen=page.screen,
            state=page.state,
            timeout=page.timeout,
            patches=self.states.patches_from(token, page, viewer=self.viewer, topics=self.shown.topics),
        )
