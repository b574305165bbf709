"""A doctor's calendar feed (docs/calendar-feed.md): make, rotate and revoke its secret address (each change
audited, the secret shown once), and read the feed that address serves.

Only doctors have feeds; for anyone else the feed screens and endpoints are "not found". An admin may revoke a
doctor's feed. A fetch looks the address up by the SHA-256 of its secret (one unique-index read), so a revocation
or rotation takes effect on the next fetch, on every instance.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk import i18n
from doctordesk.domain import calendar_feed as rules
from doctordesk.domain.errors import NotFound
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.integration import needs_last_use
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import add_recorded, revoke_recorded
from doctordesk.services.calendar.entries import read_entries
from doctordesk.services.calendar.ics import fingerprint, render_feed
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.store.calendar_tables import CalendarFeed
from doctordesk.store.tables import User

FEED_PATH = "/calendar/{token}.ics"
# Tries of a make that loses a race with another make of the same doctor's feed.
MAKE_ATTEMPTS = 5
# The last feed written per doctor is kept for this many doctors (the most recently fetched).
CACHED_FEEDS = 64
CACHE = "calendar.feeds"
ENTITY = "calendar_feed"  # in the audit trail


@dataclass(frozen=True, slots=True)
class FeedInfo:
    """A doctor's live feed as the doctor may see it again: never the secret, only its first characters."""

    id: int
    prefix: str
    created_at: datetime
    last_fetched_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewFeed:
    """A feed address just made: ``token`` is the secret, returned this once and never again."""

    token: str
    info: FeedInfo


def feed_path(token: str) -> str:
    return FEED_PATH.format(token=token)


def _info(row: CalendarFeed) -> FeedInfo:
    return FeedInfo(row.id, row.prefix, row.created_at, row.last_fetched_at)


def _audit(row: CalendarFeed) -> dict[str, object]:
    return {
        "doctor": row.doctor_id,
        "prefix": row.prefix,
        "revoked_at": row.revoked_at.isoformat() if row.revoked_at else None,
    }


def _require_doctor(actor: Actor) -> None:
    if actor.role is not Role.DOCTOR:
        raise NotFound(N_("Calendar feed not found."))


def _changed(uow: UnitOfWork, doctor_id: int) -> None:
    uow.emit(
        DomainEvent(kind=EventKind.CALENDAR_FEED_CHANGED, topics=(rules.feed_topic(doctor_id), user_topic(doctor_id)))
    )


async def _live(session: AsyncSession, doctor_id: int, *, lock: bool = False) -> CalendarFeed | None:
    query = select(CalendarFeed).where(CalendarFeed.doctor_id == doctor_id, CalendarFeed.revoked_at.is_(None))
    if lock:
        query = query.with_for_update()
    return (await session.scalars(query)).first()


async def feed_status(rt: Runtime, actor: Actor) -> FeedInfo | None:
    """The doctor's live feed (None when there is none)."""
    _require_doctor(actor)
    async with rt.db.read() as session:
        row = await _live(session, actor.user_id)
        return _info(row) if row else None


async def make_feed(rt: Runtime, actor: Actor) -> NewFeed:
    """A new feed address for the doctor. When one is live it is revoked in the same transaction (a rotation): the
    old address is "not found" from the next fetch on."""
    _require_doctor(actor)
    for _ in range(MAKE_ATTEMPTS - 1):
        try:
            return await _make(rt, actor)
        except IntegrityError:
            # Requests made a feed at once; this one lost the race on the live-feed index. Tried again, its
            # rotation revokes the winner's address, as if it had come a moment later.
            continue
    return await _make(rt, actor)


async def _make(rt: Runtime, actor: Actor) -> NewFeed:
    now = rt.clock.now()
    token = rules.new_token()
    async with unit_of_work(rt) as uow:
        session = uow.session
        old = await _live(session, actor.user_id, lock=True)
        if old is not None:
            old.revoked_at = now
            await session.flush()
        row = CalendarFeed(
            doctor_id=actor.user_id,
            token_hash=rules.token_hash(token),
            prefix=token[: rules.SHOWN_PREFIX_CHARS],
            created_at=now,
            created_by=actor.user_id,
        )
        action = "calendar-feed.rotate" if old is not None else "calendar-feed.create"
        before = _audit(old) if old is not None else None
        await add_recorded(session, actor, row, at=now, action=action, entity=ENTITY, view=_audit, before=before)
        _changed(uow, actor.user_id)
        info = _info(row)
    return NewFeed(token, info)


async def revoke_feed(rt: Runtime, actor: Actor, *, doctor_id: int | None = None) -> bool:
    """Revoke the live feed of the doctor (``actor``, or as an admin the doctor ``doctor_id``): its address is "not
    found" from the next fetch on. False when there was none (nothing written, nothing audited)."""
    if doctor_id is None or not actor.is_admin:
        _require_doctor(actor)
        doctor_id = actor.user_id
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        if actor.is_admin:
            doctor = await session.get(User, doctor_id)
            if doctor is None or doctor.role != Role.DOCTOR.value:
                raise NotFound(N_("Doctor not found."))
        row = await _live(session, doctor_id, lock=True)
        if row is None:
            return False
        revoke_recorded(session, actor, row, at=now, action="calendar-feed.revoke", entity=ENTITY, view=_audit)
        _changed(uow, doctor_id)
    return True


@dataclass(frozen=True, slots=True)
class Feed:
    """A feed as served: its ETag and its iCalendar (None when the caller already has this version)."""

    etag: str
    body: bytes | None


async def read_feed(rt: Runtime, token: str, *, known: str | None = None) -> Feed:
    """The iCalendar feed behind a secret address (``body`` None when ``known``, the caller's ETag, is current).
    Anything but a live feed of an active doctor is NotFound, the same answer for a malformed, unknown, revoked or
    rotated secret.

    Writing iCalendar costs far more than reading the entries (about 0.7 ms an event), and calendars fetch an
    unchanged feed again and again: the entries are read on every fetch (so a change shows at once) and the bytes
    are written again only when the entries differ from the last ones written for this doctor."""
    if not rules.looks_like_token(token):
        raise NotFound(N_("Calendar feed not found."))
    presented = rules.token_hash(token)
    now = rt.clock.now()
    async with rt.db.read() as session:
        found = (
            await session.execute(
                select(CalendarFeed.id, CalendarFeed.token_hash, CalendarFeed.doctor_id, CalendarFeed.last_fetched_at)
                .join(User, User.id == CalendarFeed.doctor_id)
                .where(
                    CalendarFeed.token_hash == presented,
                    CalendarFeed.revoked_at.is_(None),
                    User.active.is_(True),
                    User.role == Role.DOCTOR.value,
                )
            )
        ).first()
        if found is None or not rules.hashes_match(found.token_hash, presented):
            raise NotFound(N_("Calendar feed not found."))
        name, language = (
            await session.execute(select(User.display_name, User.language).where(User.id == found.doctor_id))
        ).one()
        language = language or i18n.DEFAULT  # the doctor's stored choice: a calendar app sends no language
        window = rules.window(now)
        entries = await read_entries(session, found.doctor_id, window)
    if needs_last_use(found.last_fetched_at, now):
        # At most one small write a minute however often calendars fetch.
        async with unit_of_work(rt) as uow:
            session = uow.session
            await session.execute(update(CalendarFeed).where(CalendarFeed.id == found.id).values(last_fetched_at=now))
    title = f"doctordesk: {name}"
    etag = fingerprint(entries, name=title, window=window, language=language)
    if known == etag:
        return Feed(etag, None)
    cache: OrderedDict[int, tuple[str, bytes]] = rt.caches.setdefault(CACHE, OrderedDict())
    cached = cache.get(found.doctor_id)
    if cached is not None and cached[0] == etag:
        cache.move_to_end(found.doctor_id)
        return Feed(etag, cached[1])
    # Writing iCalendar and the zones' VTIMEZONEs is CPU work: off the event loop.
    body = await asyncio.to_thread(render_feed, entries, name=title, window=window, language=language)
    cache[found.doctor_id] = (etag, body)
    cache.move_to_end(found.doctor_id)
    while len(cache) > CACHED_FEEDS:
        cache.popitem(last=False)
    return Feed(etag, body)
