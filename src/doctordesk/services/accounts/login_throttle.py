"""Throttling failed logins in the database (rules: domain/accounts/login_throttle.py; docs/accounts.md#throttling).

``admit`` counts an attempt as a failure before its password is checked, inside a transaction that locks the
username's and the address's rows: parallel guesses queue there, so no more of them get a password check than the
limits allow. ``succeeded`` takes the count back when the password was right. ``prune`` deletes the rows that no
longer matter (the server runs it at start and hourly).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, delete, or_, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.accounts.login_throttle import KNOWN_ADDRESS, LoginLimits, drained, is_known, seconds_until
from doctordesk.domain.errors import TooManyRequests
from doctordesk.domain.texts import N_
from doctordesk.services.uow import worker_transaction
from doctordesk.store.db import Database
from doctordesk.store.tables import LoginAddressThrottle, LoginThrottle

REFUSED = N_("Too many failed logins. Try again later.")
# A username's row is deleted once it has been left alone this long and its count has drained to nothing meanwhile.
USERNAME_ROW_IDLE = timedelta(days=1)
PRUNE_BATCH = 1000  # rows per delete, each in its own short transaction (writers are never held up for long)


def limits(settings: Settings) -> LoginLimits:
    return LoginLimits(
        address_failures=settings.login_max_failures,
        lockout=timedelta(seconds=settings.login_lockout_seconds),
        username_failures=settings.login_username_max_failures,
        interval=timedelta(seconds=settings.login_username_interval_seconds),
    )


async def _locked_rows(
    session: AsyncSession, username: str, address: str, now: datetime
) -> tuple[LoginThrottle, LoginAddressThrottle]:
    """The username's and the address's rows, created when missing, locked until the transaction ends (PostgreSQL;
    SQLite writers hold the database lock from the start)."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    await session.execute(
        insert(LoginThrottle).values(username=username, failures=0, updated_at=now).on_conflict_do_nothing()
    )
    await session.execute(
        insert(LoginAddressThrottle)
        .values(username=username, address=address, failures=0, updated_at=now)
        .on_conflict_do_nothing()
    )
    name = await session.scalars(select(LoginThrottle).where(LoginThrottle.username == username).with_for_update())
    place = await session.scalars(
        select(LoginAddressThrottle)
        .where(LoginAddressThrottle.username == username, LoginAddressThrottle.address == address)
        .with_for_update()
    )
    return name.one(), place.one()


async def admit(session: AsyncSession, limits: LoginLimits, *, username: str, address: str, now: datetime) -> None:
    """Let one login attempt for ``username`` from ``address`` go on to its password check, counted as a failure
    until ``succeeded`` says otherwise; TooManyRequests (with Retry-After) while the address is locked out of the
    username, or while the username is slowed and its next slot has not come."""
    name, place = await _locked_rows(session, username, address, now)
    if place.locked_until is not None and place.locked_until > now:
        raise TooManyRequests(REFUSED, retry_after=seconds_until(place.locked_until, now))
    name.failures, name.updated_at = drained(name.failures, name.updated_at, now, limits.interval)
    if not is_known(place.succeeded_at, now):
        if name.locked_until is not None and name.locked_until > now:
            raise TooManyRequests(REFUSED, retry_after=seconds_until(name.locked_until, now))
        if name.failures >= limits.username_failures:
            name.locked_until = now + limits.interval  # this attempt takes the slot
    name.failures += 1
    place.failures += 1
    place.updated_at = now
    if place.failures >= limits.address_failures:
        place.failures = 0
        place.locked_until = now + limits.lockout


async def succeeded(session: AsyncSession, *, username: str, address: str, now: datetime) -> None:
    """The attempt ``admit`` counted had the right password: clear the address's count, remember the address as
    known to the username, and take the attempt back from the username's count."""
    place = await session.get(LoginAddressThrottle, (username, address), with_for_update=True)
    if place is not None:
        place.failures = 0
        place.locked_until = None
        place.succeeded_at = now
        place.updated_at = now
    name = await session.get(LoginThrottle, username, with_for_update=True)
    if name is not None:
        name.failures = max(0, name.failures - 1)


async def prune(db: Database, limits: LoginLimits, *, now: datetime) -> int:
    """Delete the rows that no longer change any answer; the number deleted (docs/accounts.md#throttling).

    - a username's row left alone for ``USERNAME_ROW_IDLE`` whose count has drained to 0 by now and whose slowing
      has ended: it answers exactly as a missing row would;
    - an address's row nobody tried from for ``KNOWN_ADDRESS`` (30 days) whose lockout has ended: the address is
      no longer known to the username, and a run of failures that stopped that long ago is forgotten.
    """
    unlocked_name = or_(LoginThrottle.locked_until.is_(None), LoginThrottle.locked_until <= now)
    stale_name = and_(
        LoginThrottle.updated_at < now - USERNAME_ROW_IDLE,
        LoginThrottle.failures <= USERNAME_ROW_IDLE // limits.interval,
        unlocked_name,
    )
    unlocked_place = or_(LoginAddressThrottle.locked_until.is_(None), LoginAddressThrottle.locked_until <= now)
    stale_place = and_(LoginAddressThrottle.updated_at < now - KNOWN_ADDRESS, unlocked_place)
    names = LoginThrottle.username.in_(select(LoginThrottle.username).where(stale_name).limit(PRUNE_BATCH))
    place_key = tuple_(LoginAddressThrottle.username, LoginAddressThrottle.address)
    places = place_key.in_(
        select(LoginAddressThrottle.username, LoginAddressThrottle.address).where(stale_place).limit(PRUNE_BATCH)
    )
    # The condition is repeated outside the subquery: a row a login touched meanwhile is re-checked and kept.
    return await _delete_in_batches(db, LoginThrottle, names, stale_name) + await _delete_in_batches(
        db, LoginAddressThrottle, places, stale_place
    )


async def _delete_in_batches(
    db: Database,
    table: type[LoginThrottle] | type[LoginAddressThrottle],
    batch: ColumnElement[bool],
    condition: ColumnElement[bool],
) -> int:
    deleted = 0
    while True:
        async with worker_transaction(db) as session:
            result = await session.execute(delete(table).where(batch, condition))
        count = int(getattr(result, "rowcount", 0) or 0)
        deleted += count
        if count < PRUNE_BATCH:
            return deleted
