"""Opening a real-time stream: who it is for (bearer token or single-use ticket), stream tickets, and which open
streams' tokens are still valid."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, any_, bindparam, delete, select, update
from sqlalchemy.dialects.postgresql import ARRAY

from doctordesk.domain.errors import Unauthorized
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import auth
from doctordesk.services.uow import unit_of_work
from doctordesk.store.realtime_tables import StreamTicket
from doctordesk.store.tables import AccessToken, User

# Token ids per query when re-checking open streams (well under SQLite's and asyncpg's bound-parameter limits).
CHECK_BATCH = 1000


@dataclass(frozen=True, slots=True)
class StreamGrant:
    actor: Actor
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket: str
    expires_in: int


async def issue_ticket(rt: Runtime, actor: Actor) -> Ticket:
    """A ticket that opens one stream as ``actor``'s token within ``stream_ticket_seconds``."""
    if actor.token_id is None:
        raise Unauthorized()
    ticket = secrets.token_urlsafe(32)
    now = rt.clock.now()
    seconds = rt.settings.stream_ticket_seconds
    async with unit_of_work(rt) as uow:
        session = uow.session
        # Expired tickets are useless: sweep them here instead of in a separate job.
        await session.execute(delete(StreamTicket).where(StreamTicket.expires_at < now - timedelta(minutes=5)))
        session.add(
            StreamTicket(
                ticket_hash=auth.token_hash(ticket),
                token_id=actor.token_id,
                user_id=actor.user_id,
                expires_at=now + timedelta(seconds=seconds),
            )
        )
    return Ticket(ticket, seconds)


async def check_ticket(rt: Runtime, ticket: str) -> None:
    """Unauthorized unless ``ticket`` would open a stream now; reads only (the ticket stays unused)."""
    if not ticket or len(ticket) > 128:
        raise Unauthorized(N_("The stream ticket is not valid."))
    async with rt.db.read() as session:
        found = await session.scalar(
            select(StreamTicket.token_id).where(
                StreamTicket.ticket_hash == auth.token_hash(ticket),
                StreamTicket.used_at.is_(None),
                StreamTicket.expires_at > rt.clock.now(),
            )
        )
    if found is None:
        raise Unauthorized(N_("The stream ticket is unknown, used or expired."))


async def grant_for_ticket(rt: Runtime, ticket: str) -> StreamGrant:
    """Redeem a ticket: it works once, before it expires, while its token is valid; Unauthorized otherwise."""
    if not ticket or len(ticket) > 128:
        raise Unauthorized(N_("The stream ticket is not valid."))
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        token_id = await session.scalar(
            update(StreamTicket)
            .where(
                StreamTicket.ticket_hash == auth.token_hash(ticket),
                StreamTicket.used_at.is_(None),
                StreamTicket.expires_at > now,
            )
            .values(used_at=now)
            .returning(StreamTicket.token_id)
        )
    if token_id is None:
        raise Unauthorized(N_("The stream ticket is unknown, used or expired."))
    return await _grant_for_token_id(rt, token_id)


async def grant_for_token(rt: Runtime, token: str | None) -> StreamGrant:
    actor, expires_at = await auth.verified_token(rt, token)
    return StreamGrant(actor, expires_at)


async def _grant_for_token_id(rt: Runtime, token_id: int) -> StreamGrant:
    actor, expires_at = await auth.token_by_id(rt, token_id)
    return StreamGrant(actor, expires_at)


async def valid_tokens(rt: Runtime, token_ids: Sequence[int]) -> set[int]:
    """Those of ``token_ids`` that may still hold a stream: not revoked, not expired, their user active (what a
    stream was opened on). Primary-key lookups, ``CHECK_BATCH`` ids per query; on PostgreSQL the ids travel as one
    array parameter (``= ANY``), which asyncpg prepares once, instead of one parameter each."""
    now = rt.clock.now()
    valid: set[int] = set()
    async with rt.db.read() as session:
        postgres = session.get_bind().dialect.name == "postgresql"
        for start in range(0, len(token_ids), CHECK_BATCH):
            batch = list(token_ids[start : start + CHECK_BATCH])
            wanted = (
                AccessToken.id == any_(bindparam("ids", batch, type_=ARRAY(BigInteger)))
                if postgres
                else AccessToken.id.in_(batch)
            )
            found = await session.scalars(
                select(AccessToken.id)
                .join(User, User.id == AccessToken.user_id)
                .where(
                    wanted,
                    AccessToken.revoked_at.is_(None),
                    AccessToken.expires_at > now,
                    User.active.is_(True),
                )
            )
            valid.update(found)
    return valid
