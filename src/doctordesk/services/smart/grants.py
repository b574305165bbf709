"""The apps a user allowed (SMART grants) as the user sees them on their security page, and revoking one: every
access and refresh token the user's consents gave that app ends at once (docs/smart.md#connected-apps)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.security import ConnectedApp
from doctordesk.domain.errors import NotFound
from doctordesk.services.audit.entries import audit
from doctordesk.services.smart.tokens import revoke_family
from doctordesk.store.smart_tables import SmartAuthorization, SmartClient, SmartToken


def _live(user_id: int, now: datetime) -> tuple[ColumnElement[bool], ...]:
    return SmartToken.user_id == user_id, SmartToken.revoked_at.is_(None), SmartToken.expires_at > now


async def connected(session: AsyncSession, user_id: int, *, now: datetime) -> list[ConnectedApp]:
    """The apps holding live tokens of the user, by name."""
    rows = await session.execute(
        select(SmartClient.id, SmartClient.name, SmartClient.client_id, SmartToken.scope, SmartToken.created_at,
               SmartToken.expires_at)
        .join(SmartClient, SmartClient.id == SmartToken.client_pk)
        .where(*_live(user_id, now))
    )  # fmt: skip
    apps: dict[int, ConnectedApp] = {}
    for pk, name, client_id, scope, created, expires in rows.all():
        seen = apps.get(pk)
        scopes = set(scope.split()) | set(seen.scopes if seen else ())
        apps[pk] = ConnectedApp(
            client_pk=pk, name=name, client_id=client_id, scopes=tuple(sorted(scopes)),
            since=min(created, seen.since) if seen else created, until=max(expires, seen.until) if seen else expires,
        )  # fmt: skip
    return sorted(apps.values(), key=lambda a: (a.name.lower(), a.client_pk))


async def revoke_app(session: AsyncSession, user_id: int, client_pk: int, *, now: datetime) -> int:
    """End every grant the user gave the app ``client_pk`` (each through ``tokens.revoke_family``, as a reused
    refresh token does) and spend its launches not yet exchanged; audited ``smart.grant-revoked``. The number of
    grants ended; NotFound when the app holds no live token of the user (another's app is not theirs to see)."""
    families = list(
        await session.scalars(
            select(SmartToken.family).where(*_live(user_id, now), SmartToken.client_pk == client_pk).distinct()
        )
    )
    if not families:
        raise NotFound()
    for family in families:
        await revoke_family(session, family, now)
    await session.execute(
        update(SmartAuthorization)
        .where(
            SmartAuthorization.user_id == user_id,
            SmartAuthorization.client_pk == client_pk,
            SmartAuthorization.used_at.is_(None),
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    audit(session, at=now, actor_id=user_id, action="smart.grant-revoked", entity="smart_client", entity_id=client_pk,
          details={"grants": len(families)})  # fmt: skip
    return len(families)
