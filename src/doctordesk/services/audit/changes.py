"""Every administrative change recorded in the audit log with its before and after (through the one writer,
``entries.audit``, inside the caller's transaction)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.roles import Actor
from doctordesk.services.audit.entries import audit


def record_change(
    session: AsyncSession,
    actor: Actor | None,
    *,
    at: datetime,
    action: str,
    entity: str,
    entity_id: int | None,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> None:
    """Audit one administrative change inside the caller's transaction: what the entity was and became (None for
    "did not exist" / "no longer shown"). ``actor`` None, or a system actor (no user: the command line, a backend
    service): the service itself made the change."""
    audit(
        session,
        at=at,
        actor_id=actor.user_id if actor is not None and not actor.is_system else None,
        action=action,
        entity=entity,
        entity_id=entity_id,
        details={"before": dict(before) if before is not None else None, "after": dict(after) if after else None},
    )


class _Row(Protocol):
    @property
    def id(self) -> int: ...


class _Revocable(_Row, Protocol):
    revoked_at: datetime | None


_R = TypeVar("_R", bound=_Row)
_V = TypeVar("_V", bound=_Revocable)


async def add_recorded(
    session: AsyncSession,
    actor: Actor,
    row: _R,
    *,
    at: datetime,
    action: str,
    entity: str,
    view: Callable[[_R], Mapping[str, Any]],
    before: Mapping[str, Any] | None = None,
) -> None:
    """Add a new row, flush it for its id, and audit it (``view``: what the trail shows of it)."""
    session.add(row)
    await session.flush()
    record_change(session, actor, at=at, action=action, entity=entity, entity_id=row.id, before=before,
                  after=view(row))  # fmt: skip


def revoke_recorded(
    session: AsyncSession, actor: Actor, row: _V, *, at: datetime, action: str, entity: str,
    view: Callable[[_V], Mapping[str, Any]],
) -> None:  # fmt: skip
    """Revoke a row (a secret's record) at ``at`` and audit it, before and after as ``view`` shows them."""
    before = view(row)
    row.revoked_at = at
    record_change(session, actor, at=at, action=action, entity=entity, entity_id=row.id, before=before,
                  after=view(row))  # fmt: skip
