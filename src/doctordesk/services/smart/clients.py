"""SMART client apps, registered by admins (docs/smart.md#clients): a name, its kind, redirect URIs and allowed
scopes. A confidential app's secret is shown once and kept as a SHA-256 digest (as API keys are). Every change
is audited with the admin as actor and the app before and after (never the secret)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from doctordesk.domain.errors import Forbidden, NotFound, ValidationFailed
from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import (
    CLIENT_ID_PREFIX,
    MAX_REDIRECT_URIS,
    SECRET_PREFIX,
    ClientInfo,
    ClientKind,
    redirect_uri_problem,
    secret_digest,
)
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.admin.audit import record_change
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartClient

MAX_NAME = 100
MAX_SCOPES = 40


@dataclass(frozen=True, slots=True)
class NewClient:
    """A client just registered: ``secret`` (confidential apps) is returned this once and never again."""

    info: ClientInfo
    secret: str | None


def info_of(c: SmartClient) -> ClientInfo:
    return ClientInfo(
        c.id, c.client_id, c.name, ClientKind(c.kind), tuple(c.redirect_uris), tuple(c.allowed_scopes), c.active,
        c.created_at,
    )  # fmt: skip


def _audit(c: SmartClient) -> dict[str, object]:
    return {
        "client_id": c.client_id,
        "name": c.name,
        "kind": c.kind,
        "redirect_uris": list(c.redirect_uris),
        "allowed_scopes": list(c.allowed_scopes),
        "active": c.active,
    }


def _require_admin(actor: Actor) -> None:
    if not actor.is_admin:
        raise Forbidden()


def check_registration(name: str, redirect_uris: Sequence[str], allowed_scopes: Sequence[str]) -> None:
    """Every field's problem at once (ValidationFailed naming the fields)."""
    fields: dict[str, str] = {}
    problem = name_problem(name, max_chars=MAX_NAME)
    if problem is not None:
        fields["name"] = problem
    if not 1 <= len(redirect_uris) <= MAX_REDIRECT_URIS:
        fields["redirect_uris"] = Text("{low} to {high} addresses.", low=1, high=MAX_REDIRECT_URIS)
    else:
        for uri in redirect_uris:
            uri_problem = redirect_uri_problem(uri)
            if uri_problem is not None:
                fields["redirect_uris"] = uri_problem
                break
    unknown = smart_scopes.unknown(allowed_scopes)
    if not 1 <= len(allowed_scopes) <= MAX_SCOPES:
        fields["allowed_scopes"] = Text("{low} to {high} scopes.", low=1, high=MAX_SCOPES)
    elif unknown:
        fields["allowed_scopes"] = Text("Not a scope of this server: {scope}", scope=unknown[0])
    if fields:
        raise ValidationFailed(fields=fields)


async def register(
    rt: Runtime,
    actor: Actor,
    *,
    name: str,
    kind: ClientKind,
    redirect_uris: Sequence[str],
    allowed_scopes: Sequence[str],
) -> NewClient:
    """Register an app; a confidential one gets a secret, on this answer only."""
    _require_admin(actor)
    name = name.strip()
    uris = list(dict.fromkeys(u.strip() for u in redirect_uris))
    wanted = list(dict.fromkeys(s.strip() for s in allowed_scopes))
    check_registration(name, uris, wanted)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32) if kind is ClientKind.CONFIDENTIAL else None
    secret_hash = secret_digest(secret) if secret else None
    now = rt.clock.now()
    taken = ValidationFailed(fields={"name": N_("An app with this name exists.")})
    try:
        async with unit_of_work(rt) as uow:
            if await uow.session.scalar(select(SmartClient.id).where(SmartClient.name == name)) is not None:
                raise taken
            row = SmartClient(
                client_id=CLIENT_ID_PREFIX + secrets.token_urlsafe(12), name=name, kind=kind.value,
                secret_hash=secret_hash, redirect_uris=uris, allowed_scopes=wanted, active=True, created_at=now,
                created_by=actor.user_id,
            )  # fmt: skip
            uow.session.add(row)
            await uow.session.flush()
            record_change(
                uow.session, actor, at=now, action="smart-client.register", entity="smart_client",
                entity_id=row.id, before=None, after=_audit(row),
            )  # fmt: skip
            info = info_of(row)
    except IntegrityError as exc:
        raise taken from exc
    return NewClient(info, secret)


async def list_clients(rt: Runtime, actor: Actor) -> list[ClientInfo]:
    _require_admin(actor)
    async with rt.db.read() as session:
        return [info_of(c) for c in (await session.scalars(select(SmartClient).order_by(SmartClient.id))).all()]


async def get_client(rt: Runtime, actor: Actor, client_pk: int) -> ClientInfo:
    _require_admin(actor)
    async with rt.db.read() as session:
        row = await session.get(SmartClient, client_pk)
        if row is None:
            raise NotFound(N_("App not found."))
        return info_of(row)


async def set_active(rt: Runtime, actor: Actor, client_pk: int, *, active: bool) -> ClientInfo:
    """Deactivate an app (its tokens are refused from the next request on, it cannot start a launch) or
    reactivate it."""
    _require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        row = await uow.session.get(SmartClient, client_pk)
        if row is None:
            raise NotFound(N_("App not found."))
        before = _audit(row)
        if row.active != active:
            row.active = active
            record_change(
                uow.session, actor, at=now, action="smart-client.activate" if active else "smart-client.deactivate",
                entity="smart_client", entity_id=row.id, before=before, after=_audit(row),
            )  # fmt: skip
        return info_of(row)
