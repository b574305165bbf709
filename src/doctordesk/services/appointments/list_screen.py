"""The appointment list screen: each section read on its own terms (``domain/appointments/list_sections.py``), each
paged with "show more" through a keyset window carried in the state token (``screens/windows.py``).

A first PUT costs the same whatever the history: the first pages of every section's strands with their rows in one
statement (a UNION ALL of keyset reads, each its own index range, joined to the rows' names and places), plus a
capped count per section that goes on, one read of the visits under way, one unread count statement. A section the
client paged through with "show more" reads its strands on their own. A list without a filter's days or names runs
statements built once per shape, its moment, visits under way and viewer as parameters (every render of every open
list reads them: building them cost more than running them, docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, Select, bindparam, func, literal, select, union_all
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
from doctordesk.screens import list_filter
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.screens.windows import Windows
from doctordesk.services import show_more_screen
from doctordesk.services.appointments import list_search, notices
from doctordesk.services.appointments.reading import (
    APPOINTMENTS,
    Visibility,
    position_of,
    view_columns,
    view_of_columns,
    visibility,
    visibility_params,
    visible_to_bound,
    with_viewer_marks,
)
from doctordesk.services.show_more_screen import Bound, PagedScreen, Take
from doctordesk.store import keyset, sqlite_inline

KEYS = tuple(s.value for s in Section)
_CLOSED = (int(Status.DECLINED), int(Status.CANCELED), int(Status.COMPLETED), int(Status.NO_SHOW))
_PENDING = (int(Status.PENDING_RESPONSE), int(Status.PENDING_RESPONSE_COVERAGE_RISK))
# Sections whose size the label shows (how much work is open); the past is only paged.
_COUNTED = (Section.NEEDS_DECISION, Section.WAITING, Section.UPCOMING)

Where = tuple[ColumnElement[bool], ...]
NO_FILTER = ListFilter()
StrandKey = tuple[Section, int, int]  # a section's run and the strand in it
_A = APPOINTMENTS.c
# The reads' moving parts are parameters, so the statements of an unfiltered list are built once per shape and kept
# (building a statement and its cache key cost more than running it): the moment (``now``, ``since``), the visits
# under way (``under_way``, an expanding list) and the viewer (``visibility_params``).
_NOW: BindParameter[datetime] = bindparam("now")
_UNDER_WAY: BindParameter[list[int]] = bindparam("under_way", expanding=True)
_STRAND = 19  # the first pages' column of the strand a row belongs to, after ``view_columns``


@functools.lru_cache(maxsize=1024)
def _section_parts(
    section: Section, *, under_way: bool, allowed: tuple[int, ...] | None
) -> tuple[tuple[Where, ...], ...]:
    """A section as consecutive runs in its order; a run is one or more strands (one status each) merged by their
    order. Every strand is a plain index range, so a page reads a page's worth of index entries however long the
    history (an IN over statuses would make the database walk every row of the doctor's range). ``allowed``: the
    filter's statuses (None: all); ``under_way``: whether visits under way are shown apart (``_UNDER_WAY``). Built
    once per shape: every read of a section walks them, and the conditions are the same for every viewer."""
    start, status = _A.start_at, _A.status

    def each(statuses: tuple[int, ...], *where: ColumnElement[bool]) -> tuple[Where, ...]:
        return tuple((status == s, *where) for s in statuses if allowed is None or s in allowed)

    if section is Section.NEEDS_DECISION:
        return (each((int(Status.REQUESTED),), start > _NOW),)
    if section is Section.WAITING:
        return (each(_PENDING, start > _NOW),)
    future_approved = each((int(Status.APPROVED),), start > _NOW)
    if section is Section.UPCOMING:
        if not under_way or (allowed is not None and int(Status.APPROVED) not in allowed):
            return (future_approved,)
        return (((_A.id.in_(_UNDER_WAY),),), future_approved)
    # Past and closed, newest first: closed ones whose time is still ahead, then everything that started.
    started: Where = (start <= _NOW, _A.id.not_in(_UNDER_WAY)) if under_way else (start <= _NOW,)
    return (each(_CLOSED, start > _NOW), each(allowed, *started) if allowed is not None else (started,))


def _strands(
    sections: Iterable[Section], *, under_way: bool, allowed: tuple[int, ...] | None, narrowed: Where
) -> list[tuple[StrandKey, Where]]:
    """Every strand of ``sections``, keyed by where it stands, each narrowed by ``narrowed`` (the filter's)."""
    return [
        ((section, r, s), (*where, *narrowed))
        for section in sections
        for r, run in enumerate(_section_parts(section, under_way=under_way, allowed=allowed))
        for s, where in enumerate(run)
    ]


def _first_pages_statement(shape: Visibility, keyed: list[tuple[StrandKey, Where]], limit: int) -> Any:
    """The first ``limit`` rows of each strand with their views, in one statement: the strands' keyset reads as one
    UNION ALL of ids (each its own index range), joined to what the views show."""
    members = []
    for n, ((section, _, _), where) in enumerate(keyed):
        order = keyset.ordered(_A.start_at, _A.id, descending=section.newest_first)
        strand = visible_to_bound(select(literal(n).label("strand"), _A.id.label("first_id")), shape).where(*where)
        page = strand.order_by(*order).limit(limit).subquery()
        members.append(select(page.c.strand, page.c.first_id))
    firsts = union_all(*members).subquery("firsts")
    return view_columns().add_columns(firsts.c.strand).join(firsts, firsts.c.first_id == _A.id)


@functools.lru_cache(maxsize=512)
def _first_pages_kept(
    shape: Visibility,
    sections: tuple[Section, ...],
    under_way: bool,
    allowed: tuple[int, ...] | None,
    limit: int,
) -> tuple[list[tuple[StrandKey, Where]], Any]:
    """``_first_pages_statement`` of a list without a filter's days or names, built once per shape (a few dozen
    shapes at most: viewer kinds × sections read × visits under way or not × status filters × page sizes)."""
    keyed = _strands(sections, under_way=under_way, allowed=allowed, narrowed=())
    return keyed, _first_pages_statement(shape, keyed, limit)


@functools.cache
def _under_way_statement(shape: Visibility) -> Select[Any]:
    return visible_to_bound(select(_A.id, _A.start_at, _A.duration_minutes), shape).where(
        _A.status == int(Status.APPROVED), _A.start_at > bindparam("since"), _A.start_at <= _NOW
    )


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
    params: dict[str, Any] = field(default_factory=dict)  # the reads' parameters (``_NOW``, ``_UNDER_WAY``, viewer)

    @property
    def shape(self) -> Visibility:
        return visibility(self.actor)

    def parts(self, section: Section) -> tuple[tuple[Where, ...], ...]:
        """A section as consecutive runs of strands (``_section_parts``), narrowed by the filter's days and
        patients and without the strands of statuses it leaves out."""
        runs = _section_parts(section, under_way=bool(self.under_way), allowed=self.statuses)
        return tuple(tuple((*w, *self.narrowed) for w in run) for run in runs)

    async def with_first_pages(self, sections: Iterable[Section], limit: int) -> _Reader:
        """The reader with the first ``limit`` rows of every strand of ``sections`` and their views, read in one
        statement (``_first_pages_statement``)."""
        wanted, under_way = tuple(sections), bool(self.under_way)
        if self.narrowed:
            keyed = _strands(wanted, under_way=under_way, allowed=self.statuses, narrowed=self.narrowed)
            statement = _first_pages_statement(self.shape, keyed, limit) if keyed else None
        else:
            keyed, statement = _first_pages_kept(self.shape, wanted, under_way, self.statuses, limit)
        if statement is None or not keyed:
            return self
        first: dict[StrandKey, list[AppointmentView]] = {key: [] for key, _ in keyed}
        found = (
            await self.session.execute(statement, self.params)
            if self.narrowed  # built for this read: not worth a plan of its own
            else await sqlite_inline.planned_rows(self.session, statement, self.params)
        )
        for row in found:
            first[keyed[row[_STRAND]][0]].append(view_of_columns(row))
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
            query = visible_to_bound(view_columns(), self.shape).where(*where)
            if bound is not None:
                edge = keyset.through if bound.through else keyset.beyond
                query = query.where(edge(_A.start_at, _A.id, bound.position, descending=descending))
            query = query.order_by(*keyset.ordered(_A.start_at, _A.id, descending=descending))
            return [view_of_columns(r) for r in await self.session.execute(query.limit(limit), self.params)]

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
            strand = visible_to_bound(select(_A.id), self.shape).where(*where)
            order = keyset.ordered(_A.start_at, _A.id)
            capped = strand.order_by(*order).limit(COUNT_CAP).subquery()
            total += await self.session.scalar(select(func.count()).select_from(capped), self.params) or 0
        return min(total, COUNT_CAP)

    async def read(self, section: Section, window: Position | None, size: int) -> Slice[AppointmentView]:
        shown = await show_more_screen.read_section(self.take(section), position_of, window=window, size=size)
        if shown.more and section in _COUNTED:
            shown = replace(shown, total=await self.count(section))
        return shown


async def _reader(session: AsyncSession, actor: Actor, now: datetime, f: ListFilter = NO_FILTER) -> _Reader:
    params: dict[str, Any] = {**visibility_params(actor), "now": now}
    candidates = _under_way_statement(visibility(actor))
    rows = await sqlite_inline.planned_rows(session, candidates, {**params, "since": now - MAX_VISIT})
    ends = {id_: start + timedelta(minutes=minutes) for id_, start, minutes in rows}
    under_way = tuple(sorted(i for i, end in ends.items() if end > now))
    under_way_ends = tuple(ends[i] for i in under_way)
    params["under_way"] = list(under_way)
    if not f.active:
        return _Reader(session, actor, now, under_way, under_way_ends, params=params)
    narrowed = await list_search.narrowing(session, actor, f)
    statuses = tuple(int(s) for s in f.statuses) if f.statuses else None
    return _Reader(session, actor, now, under_way, under_way_ends, narrowed, statuses, params=params)


@dataclass(frozen=True, slots=True)
class Sections:
    """The sections as read at ``now``, and when time alone next changes them (``list_sections.list_edge``)."""

    shown: dict[Section, Slice[AppointmentView]]
    edge: datetime | None


async def read_sections(
    session: AsyncSession,
    actor: Actor,
    *,
    now: datetime,
    windows: Windows,
    size: int,
    list_filter: ListFilter = NO_FILTER,
) -> Sections:
    """Every section as the viewer sees it, through its window, narrowed by ``list_filter`` (unread counts included)."""
    reader = await _reader(session, actor, now, list_filter)
    reader = await reader.with_first_pages([s for s in Section if s.value not in windows], size + 1)
    sections = {s: await reader.read(s, windows.get(s.value), size) for s in Section}
    views = await with_viewer_marks(session, actor, [v for shown in sections.values() for v in shown.rows])
    by_id = {v.id: v for v in views}
    edge = list_edge(views, now, under_way_ends=reader.under_way_ends)
    return Sections({s: replace(shown, rows=[by_id[v.id] for v in shown.rows]) for s, shown in sections.items()}, edge)


# --- the screen -----------------------------------------------------------------------------------------------


def _viewing(
    rt: Runtime, actor: Actor, windows: Windows, f: ListFilter, *, layout: Layout, client_id: str | None
) -> Viewing:
    timeout, size = rt.settings.poll_list_seconds, rt.settings.list_page_size
    now = rt.clock.now()

    async def render() -> Page:
        async with rt.db.read(screen=True) as session:
            sections = await read_sections(session, actor, now=now, windows=windows, size=size, list_filter=f)
            told = await notices.open_notices(session, actor.user_id)
        page = screen.render(
            sections.shown, actor, now=now, layout=layout, timeout=timeout, notices=told, current_filter=f
        )
        return lasting(page, sections.edge)

    viewer = Viewer.of(actor, client_id)
    # What the render reads besides the topics and the clock: one render serves the viewer's clients that poll the
    # same list (the sign-in behind each request aside: it changes nothing the list shows).
    shares = (screen.SCREEN, replace(actor, token_id=None), layout, f, tuple(sorted(windows.items())), timeout, size)
    return Viewing(rt.screens, rt.wall(), viewer, screen.shown(actor), timeout, render, shares)


def _paged(rt: Runtime, actor: Actor, f: ListFilter, *, layout: Layout, client_id: str | None) -> PagedScreen:
    async def next_window(windows: Windows, section: str) -> Position | None:
        async with rt.db.read() as session:
            reader = await _reader(session, actor, rt.clock.now(), f)
            take = reader.take(Section(section))
            return await show_more_screen.next_window(
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

    async def page(self, list_filter: ListFilter = NO_FILTER) -> Page:
        page = await self._screen(list_filter).page()
        page.state += filter_token(list_filter)
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
    where = list_filter.endpoint(f)
    return UpdateSet(screen=screen.SCREEN, state="", timeout=rt.settings.poll_list_seconds, navigate=where)
