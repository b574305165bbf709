"""SMART client apps, registered by admins (docs/smart.md#clients): a name, its kind, redirect URIs and allowed
scopes. A confidential app's secret is shown once and kept as a SHA-256 digest (as API keys are). Every change
is audited with the admin as actor and the app before and after (never the secret)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Actor, require_admin
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
from doctordesk.domain.webhooks.rules import check_url
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.smart import jwks
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartClient

MAX_NAME = 100
MAX_SCOPES = 40


@dataclass(frozen=True, slots=True)
class Keys:
    """How a backend service proves itself: its key set at ``jwks_uri``, or given inline (``jwks``)."""

    jwks_uri: str | None = None
    jwks: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class NewClient:
    """A client just registered: ``secret`` (confidential apps) is returned this once and never again."""

    info: ClientInfo
    secret: str | None


def info_of(client: SmartClient) -> ClientInfo:
    return ClientInfo(
        client.id, client.client_id, client.name, ClientKind(client.kind), tuple(client.redirect_uris),
        tuple(client.allowed_scopes), client.active,
        client.created_at, jwks_uri=client.jwks_uri, key_ids=jwks.key_ids(client.jwks), launch_url=client.launch_url,
    )  # fmt: skip


def _audit(c: SmartClient) -> dict[str, object]:
    return {
        "client_id": c.client_id,
        "name": c.name,
        "kind": c.kind,
        "redirect_uris": list(c.redirect_uris),
        "allowed_scopes": list(c.allowed_scopes),
        "active": c.active,
        "jwks_uri": c.jwks_uri,
        "key_ids": list(jwks.key_ids(c.jwks)),
        "launch_url": c.launch_url,
    }


def _backend_problems(kind: ClientKind, keys: Keys, scopes: Sequence[str], launch_url: str | None) -> dict[str, str]:
    """A backend service: exactly one key set (a JWKS URL, https or http on loopback, or an inline JWKS of RSA or
    EC P-384 public keys), ``system/`` scopes only, no launch URL. Any other app: none of these."""
    fields: dict[str, str] = {}
    if kind is not ClientKind.BACKEND:
        if keys.jwks_uri or keys.jwks is not None:
            fields["jwks_uri" if keys.jwks_uri else "jwks"] = N_("Only a backend service has a key set.")
        if any(smart_scopes.is_system(s) for s in scopes):
            fields["allowed_scopes"] = N_("system/ scopes are for backend services only.")
        if launch_url and redirect_uri_problem(launch_url) is not None:
            fields["launch_url"] = N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")
        return fields
    if launch_url:
        fields["launch_url"] = N_("A backend service is not launched.")
    if bool(keys.jwks_uri) == (keys.jwks is not None):
        fields["jwks_uri"] = N_("Give a JWKS URL or the key set itself (one of them).")
    elif keys.jwks_uri and redirect_uri_problem(keys.jwks_uri) is not None:
        fields["jwks_uri"] = N_("An absolute https URL (http only on 127.0.0.1 or [::1]), without a fragment.")
    elif keys.jwks is not None:
        try:
            jwks.key_set(keys.jwks)
        except ValueError:
            fields["jwks"] = N_("A key set of public keys: RSA (2048 bits or more) or EC P-384, each with a kid.")
    if not all(smart_scopes.is_system(s) for s in scopes):
        fields["allowed_scopes"] = N_("A backend service has system/ scopes only (reading and searching).")
    return fields


def _check_key_address(rt: Runtime, url: str) -> None:
    """The early, friendly refusal of a JWKS URL on a loopback, private or local host (unless the server allows
    them): the address actually dialled is checked again on every fetch (``services/smart/jwks.py``)."""
    try:
        check_url(url, allow_private=rt.settings.smart_jwks_allow_private_addresses)
    except ValidationFailed as refused:
        raise ValidationFailed(fields={"jwks_uri": refused.fields.get("url", N_("Not a valid URL."))}) from refused


def check_registration(
    name: str,
    redirect_uris: Sequence[str],
    allowed_scopes: Sequence[str],
    *,
    kind: ClientKind = ClientKind.PUBLIC,
    keys: Keys = Keys(),  # noqa: B008 - frozen, never changed
    launch_url: str | None = None,
) -> None:
    """Every field's problem at once (ValidationFailed naming the fields)."""
    fields: dict[str, str] = {}
    problem = name_problem(name, max_chars=MAX_NAME)
    if problem is not None:
        fields["name"] = problem
    if kind is ClientKind.BACKEND:
        if redirect_uris:
            fields["redirect_uris"] = N_("A backend service has no redirect URIs.")
    elif not 1 <= len(redirect_uris) <= MAX_REDIRECT_URIS:
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
    fields = {**_backend_problems(kind, keys, allowed_scopes, launch_url), **fields}
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
    keys: Keys = Keys(),  # noqa: B008 - frozen, never changed
    launch_url: str | None = None,
) -> NewClient:
    """Register an app; a confidential one gets a secret, on this answer only. A backend service has its key set
    (``keys``) instead of redirect URIs; an app an EHR launches may have its ``launch_url``."""
    require_admin(actor)
    name = name.strip()
    uris = list(dict.fromkeys(u.strip() for u in redirect_uris))
    wanted = list(dict.fromkeys(s.strip() for s in allowed_scopes))
    keys = Keys((keys.jwks_uri or "").strip() or None, keys.jwks)
    launch_url = (launch_url or "").strip() or None
    check_registration(name, uris, wanted, kind=kind, keys=keys, launch_url=launch_url)
    if keys.jwks_uri:
        _check_key_address(rt, keys.jwks_uri)
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
                created_by=actor.user_id, jwks_uri=keys.jwks_uri, jwks=keys.jwks, launch_url=launch_url,
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
    require_admin(actor)
    async with rt.db.read() as session:
        return [info_of(c) for c in (await session.scalars(select(SmartClient).order_by(SmartClient.id))).all()]


async def get_client(rt: Runtime, actor: Actor, client_pk: int) -> ClientInfo:
    require_admin(actor)
    async with rt.db.read() as session:
        row = await session.get(SmartClient, client_pk)
        if row is None:
            raise NotFound(N_("App not found."))
        return info_of(row)


async def set_active(rt: Runtime, actor: Actor, client_pk: int, *, active: bool) -> ClientInfo:
    """Deactivate an app (its tokens are refused from the next request on, it cannot start a launch) or
    reactivate it."""
    require_admin(actor)
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
