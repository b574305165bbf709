"""List screens whose sections page with "show more": reading a section through its window, and the page, poll
and "show more" answers of such a screen (the windows travel in the state token: ``screens/windows.py``).

A section shows its first page, or, once the client asked for more, every row through its window, whichever is
longer, and never more than ``MAX_SECTION_ROWS``. Both are keyset reads: rows that arrive meanwhile are shown
where they belong and shift nothing, so walking a section with "show more" meets every row once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.keyset import Position, Slice
from doctordesk.domain.texts import Text
from doctordesk.screens.protocol import Page, UpdateSet
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.windows import Windows, join_state, split_state

T = TypeVar("T")

# The most rows one section shows: past it the screen offers no "show more" (docs/appointment-list.md).
MAX_SECTION_ROWS = 5000


@dataclass(frozen=True, slots=True)
class Bound:
    """Rows ``through`` a position (from the start of the list), or strictly after it."""

    position: Position
    through: bool


# Reads up to ``limit`` rows of a section in its order, within ``bound`` (None: from the start).
Take = Callable[[Bound | None, int], Awaitable[list[T]]]


async def read_section(
    take: Take[T], position_of: Callable[[T], Position], *, window: Position | None, size: int
) -> Slice[T]:
    """The rows the client sees: the first ``size``, or all through ``window`` when those are more."""
    if window is not None:
        rows = await take(Bound(window, through=True), MAX_SECTION_ROWS)
        if len(rows) > size:
            more = bool(await take(Bound(position_of(rows[-1]), through=False), 1))
            return Slice(rows, more=more, at_limit=len(rows) >= MAX_SECTION_ROWS)
    rows = await take(None, size + 1)
    return Slice(rows[:size], more=len(rows) > size)


async def next_window(
    take: Take[T], position_of: Callable[[T], Position], *, window: Position | None, size: int
) -> Position | None:
    """The window once the client asked for more: through the ``size``-th row after the last one it is shown."""
    shown = await read_section(take, position_of, window=window, size=size)
    if not shown.rows:
        return None
    last = position_of(shown.rows[-1])
    room = MAX_SECTION_ROWS - len(shown.rows)
    if not shown.more or room <= 0:
        return last
    rows = await take(Bound(last, through=False), min(size, room))
    return position_of(rows[-1]) if rows else last


@dataclass(frozen=True, slots=True)
class PagedScreen:
    """A list screen with "show more" sections: ``viewing`` describes the screen through given windows,
    ``next_window`` finds a section's window after "show more"."""

    sections: Sequence[str]
    viewing: Callable[[Windows], Viewing]
    next_window: Callable[[Windows, str], Awaitable[Position | None]]

    async def page(self) -> Page:
        """The PUT: every section at its first page."""
        return await self.viewing({}).page()

    async def poll(self, token: str | None) -> UpdateSet:
        """The poll: what changed since the client's page, its windows kept."""
        inner, windows = split_state(token, self.sections)
        update = await self.viewing(windows).poll(inner)
        update.state = join_state(update.state, windows, self.sections)
        return update

    async def refresh(self, token: str | None) -> UpdateSet:
        """The screen rendered now as patches to the client's page, its windows kept: the answer to an action
        taken on the list."""
        inner, windows = split_state(token, self.sections)
        update = await self.viewing(windows).refresh(inner)
        update.state = join_state(update.state, windows, self.sections)
        return update

    async def more(self, token: str | None, section: str) -> UpdateSet:
        """Show more of ``section``: its next rows (and whatever else changed) as patches to the client's page."""
        if section not in self.sections:
            raise ValidationFailed(fields={"section": Text("One of: {choices}.", choices=", ".join(self.sections))})
        inner, windows = split_state(token, self.sections)
        window = await self.next_window(windows, section)
        if window is not None:
            windows = {**windows, section: window}
        update = await self.viewing(windows).refresh(inner)
        update.state = join_state(update.state, windows, self.sections)
        return update
