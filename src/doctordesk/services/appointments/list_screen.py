"""The appointment list screen: each section read on its own terms (``domain/appointments/list_sections.py``), each
paged with "show more" through a keyset window carried in the state token (``screens/windows.py``).

A first PUT costs the same whatever the history: the first pages of every section's strands in one statement (a
UNION ALL of keyset reads, each its own index range) and their rows in a second, plus a capped count per section
that goes on, one read of the visits under way, one grouped unread count. A section the client paged through with
"show more" reads its strands on their own.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, func, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_filter import ListFilter, filter_token, parse_filter, split_filter
from doctordesk.domain.appointments.list_sections import MAX_VISIT, Section, list_edge
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.keyset import COUNT_CAP, Position, Slice
from doctordesk.domain.roles import Actor
from doctordesk.runtime import Runtime
from doctordesk.screens import appointment_list as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.windows import Windows
from doctordesk.services import show_more
from doctordesk.services.appointments import list_search, notices
from doctordesk.services.appointments.reading import base_query, position_of, view_of, visible_to, with_unread
from doctordesk.services.show_more import Bound, PagedScreen, Take
from doctordesk.store import keyset
from doctordesk.store.tables import Appointment

KEYS = tuple(s.value for s in Section)
_CLOSED = (int(Status.DECLINED), int(Status.CANCELED), int(Status.COMPLETED), int(Status.NO_SHOW))
_PENDING = (int(Status.PENDING_RESPONSE), int(Status.PENDING_RESPONSE_COVERAGE_RISK))
# Sections whose size the label shows (how much work is open); the past is only paged.
_COUNTED = (Section.NEEDS_DECISION, Section.WAITING, Section.UPCOMING)

Where = tuple[ColumnElement[bool], ...]
NO_FILTER = ListFilter()
StrandKey = tuple[Section, int, int]  # a section's run and the strand in it


@dataclass(frozen=True, slots=True)
class _Reader:
    """The sections as one viewer sees them at one moment."""

    session: AsyncSession
    actor: Actor
    now: datetime
    under_way: tuple[int, ...]  # approved appointments that started and have not ended
    under_way_ends: tuple[datetime, ...]  # when each of them ends
    narrowed: Where = ()  # the filter's days and patients, on every strand
    statuses: tuple[int, ...] | None = None  # the filter's statuses (None: all)
    # Strands' first rows read together (``with_first_pages``), up to ``first_limit`` each.
    first: dict[StrandKey, list[AppointmentView]] | None = None
    first_limit: int = 0

    def parts(self, section: Section) -> tuple[tuple[Where, ...], ...]:
        """A section as consecutive runs in its order; a run is one or more strands (one status each) merged by
        their order. Every strand is a plain index range, so a page reads a page's worth of index entries however
        long the history (an IN over statuses would make the database walk every row of the doctor's range).
        A filter drops the strands of other statuses and narrows the rest (its days, its patients)."""
        return tuple(tuple((*w, *self.narrowed) for w in run) for run in self._parts(section))

    def _parts(self, section: Section) -> tuple[tuple[Where, ...], ...]:
        start, status, now, allowed = Appointment.start_at, Appointment.status, self.now, self.statuses

        def each(statuses: tuple[int, ...], *where: ColumnElement[bool]) -> tuple[Where, ...]:
            return tuple((status == s, *where) for s in statuses if allowed is None or s in allowed)

        if section is Section.NEEDS_DECISION:
            return (each((int(Status.REQUESTED),), start > now),)
        if section is Section.WAITING:
            return (each(_PENDING, start > now),)
        future_approved = each((int(Status.APPROVED),), start > now)
        if section is Section.UPCOMING:
            if not self.under_way or (allowed is not None and int(Status.APPROVED) not in allowed):
                return (future_approved,)
            return (((Appointment.id.in_(self.under_way),),), future_approved)
        # Past and closed, newest first: closed ones whose time is still ahead, then everything that started.
        started: Where = (start <= now, Appointment.id.not_in(self.under_way)) if self.under_way else (start <= now,)
        return (each(_CLOSED, start > now), each(allowed, *started) if allowed is not None else (started,))

    def strands(self, sections: Iterable[Section]) -> list[tuple[StrandKey, Where]]:
        """Every strand of ``sections``, keyed by where it stands."""
        return [
            ((section, r, s), where)
            for section in sections
            for r, run in enumerate(self.parts(section))
            for s, where in enumerate(run)
        ]

    async def with_first_pages(self, sections: Iterable[Section], limit: int) -> _Reader:
        """The reader with the first ``limit`` rows of every strand of ``sections`` read in two statements: the
        strands' ids and starts as one UNION ALL of their keyset reads, then those rows' views."""
        keyed = self.strands(sections)
        if not keyed:
            return self
        members = []
        for n, ((section, _, _), where) in enumerate(keyed):
            order = keyset.ordered(Appointment.start_at, Appointment.id, descending=section.newest_first)
            strand = visible_to(select(literal(n).label("strand"), Appointment.id), self.actor).where(*where)
            page = strand.order_by(*order).limit(limit).subquery()
            members.append(select(page.c.strand, page.c.id))
        found = (await self.session.execute(union_all(*members))).all()
        views: dict[int, AppointmentView] = {}
        if found:
            rows = visible_to(base_query(), self.actor).where(Appointment.id.in_({r.id for r in found}))
            views = {v.id: v for v in map(view_of, await self.session.execute(rows))}
        first: dict[StrandKey, list[AppointmentView]] = {key: [] for key, _ in keyed}
        for row in found:
            first[keyed[row.strand][0]].append(views[row.id])
        for key, shown in first.items():
            shown.sort(key=position_of, reverse=key[0].newest_first)
        return replace(self, first=first, first_limit=limit)

    def _first(self, key: StrandKey, bound: Bound | None, limit: int) -> list[AppointmentView] | None:
        """A strand's rows from ``with_first_pages``, when they answer this read."""
        shown = self.first.get(key) if self.first is not None and bound is None else None
        if shown is None or (len(shown) >= self.first_limit and limit > len(shown)):
            return None  # not read, or the strand may go on past what was read
        return shown[:limit]

    def take(self, section: Section) -> Take[AppointmentView]:
        descending = section.newest_first

        async def strand(key: StrandKey, where: Where, bound: Bound | None, limit: int) -> list[AppointmentView]:
            known = self._first(key, bound, limit)
            if known is not None:
                return known
            query = visible_to(base_query(), self.actor).where(*where)
            if bound is not None:
                edge = keyset.through if bound.through else keyset.beyond
                query = query.where(edge(Appointment.start_at, Appointment.id, bound.position, descending=descending))
            query = query.order_by(*keyset.ordered(Appointment.start_at, Appointment.id, descending=descending))
            return [view_of(r) for r in await self.session.execute(query.limit(limit))]

        async def take(bound: Bound | None, limit: int) -> list[AppointmentView]:
            views: list[AppointmentView] = []
            for r, run in enumerate(self.parts(section)):
                wanted = limit - len(views)
                strands = [await strand((section, r, s), where, bound, wanted) for s, where in enumerate(run)]
                merged = heapq.merge(*strands, key=position_of, reverse=descending)
                views.extend(itertools.islice(merged, wanted))
                if len(views) >= limit:
                    break
            return views

        return take

    async def count(self, section: Section) -> int:
        """How many the section holds, counted up to ``COUNT_CAP``."""
        total = 0
        for where in itertools.chain.from_iterable(self.parts(section)):
            # Ordered as the index is: without it PostgreSQL may expect the first hundred rows anywhere in a
            # sequential scan, and the rows it wants lie at the end of the table.
            strand = visible_to(select(Appointment.id), self.actor).where(*where)
            order = keyset.ordered(Appointment.start_at, Appointment.id)
            capped = strand.order_by(*order).limit(COUNT_CAP).subquery()
            total += await self.session.scalar(select(func.count()).select_from(capped)) or 0
        return min(total, COUNT_CAP)

    async def read(self, section: Section, window: Position | None, size: int) -> Slice[AppointmentView]:
        shown = await show_more.read_section(self.take(section), position_of, window=window, size=size)
        if shown.more and section in _COUNTED:
            shown = replace(shown, total=await self.count(section))
        return shown


async def _reader(session: AsyncSession, actor: Actor, now: datetime, f: ListFilter = NO_FILTER) -> _Reader:
    candidates = visible_to(select(Appointment.id, Appointment.start_at, Appointment.duration_minutes), actor).where(
        Appointment.status == int(Status.APPROVED),
        Appointment.start_at > now - MAX_VISIT,
        Appointment.start_at <= now,
    )
    rows = (await session.execute(candidates)).all()
    ends = {r.id: r.start_at + timedelta(minutes=r.duration_minutes) for r in rows}
    under_way = tuple(sorted(i for i, end in ends.items() if end > now))
    under_way_ends = tuple(ends[i] for i in under_way)
    if not f.active:
        return _Reader(session, actor, now, under_way, under_way_ends)
    narrowed = await list_search.narrowing(session, actor, f)
    statuses = tuple(int(s) for s in f.statuses) if f.statuses else None
    return _Reader(session, actor, now, under_way, under_way_ends, narrowed, statuses)


@dataclass(frozen=True, slots=True)
class Sections:
    """The sections as read at ``now``, and when time alone next changes them (``list_sections.list_edge``)."""

    shown: dict[Section, Slice[AppointmentView]]
    edge: datetime | None


async def read_sections(
    session: AsyncSession, actor: Actor, *, now: datetime, windows: Windows, size: int, f: ListFilter = NO_FILTER
) -> Sections:
    """Every section as the viewer sees it, through its window, narrowed by ``f`` (unread counts included)."""
    reader = await _reader(session, actor, now, f)
    reader = await reader.with_first_pages([s for s in Section if s.value not in windows], size + 1)
    sections = {s: await reader.read(s, windows.get(s.value), size) for s in Section}
    views = await with_unread(session, actor, [v for shown in sections.values() for v in shown.rows])
    by_id = {v.id: v for v in views}
    edge = list_edge(views, now, under_way_ends=reader.under_way_ends)
    return Sections({s: replace(shown, rows=[by_id[v.id] for v in shown.rows]) for s, shown in sections.items()}, edge)


# --- the screen -----------------------------------------------------------------------------------------------


def _viewing(
    rt: Runtime, actor: Actor, windows: Windows, f: ListFilter, *, layout: Layout, client_id: str | None
) -> Viewing:
    timeout = rt.settings.poll_list_seconds
    now = rt.clock.now()

    async def render() -> Page:
        async with rt.db.read() as session:
            size = rt.settings.list_page_size
            sections = await read_sections(session, actor, now=now, windows=windows, size=size, f=f)
            told = await notices.open_notices(session, actor.user_id)
        page = screen.render(sections.shown, actor, now=now, layout=layout, timeout=timeout, notices=told, f=f)
        return lasting(page, sections.edge)

    viewer = Viewer.of(actor, client_id)
    return Viewing(rt.screens, rt.wall(), viewer, screen.shown(actor), timeout, render)


def _paged(rt: Runtime, actor: Actor, f: ListFilter, *, layout: Layout, client_id: str | None) -> PagedScreen:
    async def next_window(windows: Windows, section: str) -> Position | None:
        async with rt.db.read() as session:
            reader = await _reader(session, actor, rt.clock.now(), f)
            take = reader.take(Section(section))
            return await show_more.next_window(
                take, position_of, window=windows.get(section), size=rt.settings.list_page_size
            )

    return PagedScreen(
        KEYS, lambda windows: _viewing(rt, actor, windows, f, layout=layout, client_id=client_id), next_window
    )


@dataclass(frozen=True, slots=True)
class ListScreen:
    """The appointment list as ``actor`` sees it: its page (PUT, filtered as its URL says), poll (PATCH), the
    answer to an action taken on it, and "show more" of a section. The filter rides in the state token
    (``filter_token``), so every answer to a PATCH or POST keeps it."""

    rt: Runtime
    actor: Actor
    layout: Layout
    client_id: str | None

    def _screen(self, f: ListFilter) -> PagedScreen:
        return _paged(self.rt, self.actor, f, layout=self.layout, client_id=self.client_id)

    async def page(self, f: ListFilter = NO_FILTER) -> Page:
        page = await self._screen(f).page()
        page.state += filter_token(f)
        return page

    async def poll(self, token: str | None) -> UpdateSet:
        rest, f = split_filter(token)
        return _keep(await self._screen(f).poll(rest), f)

    async def refresh(self, token: str | None) -> UpdateSet:
        rest, f = split_filter(token)
        return _keep(await self._screen(f).refresh(rest), f)

    async def more(self, token: str | None, section: str) -> UpdateSet:
        rest, f = split_filter(token)
        return _keep(await self._screen(f).more(rest, section), f)


def _keep(update: UpdateSet, f: ListFilter) -> UpdateSet:
    if update.state:
        update.state += filter_token(f)
    return update


def list_screen(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> ListScreen:
    """The appointment list as ``actor`` sees it (``ListScreen``)."""
    return ListScreen(rt, actor, layout, client_id)


def apply_filter(rt: Runtime, form: Mapping[str, str]) -> UpdateSet:
    """The filter form as the list's URL: the screen navigates there (reload and Back keep it)."""
    f, fields = parse_filter(form)
    if fields:
        raise ValidationFailed(fields=fields)
    return UpdateSet(screen=screen.SCREEN, state="", timeout=rt.settings.poll_list_seconds, navigate=screen.endpoint(f))
