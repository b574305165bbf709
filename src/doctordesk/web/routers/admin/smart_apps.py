"""Admin JSON API: SMART client apps (docs/smart.md#clients), admins only. A confidential app's secret is on the
registration's answer only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import ConfigDict, Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart.clients import (
    MAX_REDIRECT_URI_CHARS,
    MAX_REDIRECT_URIS,
    REDIRECT_URI_PATTERN,
    ClientInfo,
    ClientKind,
)
from doctordesk.domain.smart.scopes import SCOPE_PATTERN
from doctordesk.services.smart import clients
from doctordesk.web.bodies import StrictBody, stated
from doctordesk.web.deps import RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import ROLE_READ_RESPONSES, SUBMIT_RESPONSES

router = APIRouter(prefix="/admin", tags=["admin"])

AdminDep = Annotated[Actor, require_roles(Role.ADMIN)]
AppId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]


class AppIn(StrictBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    name: str = Field(min_length=1, max_length=100, json_schema_extra=stated(pattern=NAME_PATTERN))
    kind: ClientKind = Field(
        description="public (PKCE only), confidential (a secret too) or backend (a system: private_key_jwt, system/"
        " scopes, no redirect URIs)"
    )
    redirect_uris: list[
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_REDIRECT_URI_CHARS,
                json_schema_extra=stated(pattern=REDIRECT_URI_PATTERN),
            ),
        ]
    ] = Field(
        default_factory=list,
        max_length=MAX_REDIRECT_URIS,
        description="https, or http on the loopback address; 1 or more, none for a backend service",
    )
    allowed_scopes: list[
        Annotated[str, Field(min_length=1, max_length=100, json_schema_extra=stated(pattern=SCOPE_PATTERN))]
    ] = Field(
        min_length=1,
        max_length=clients.MAX_SCOPES,
        description="e.g. patient/Appointment.rs, openid, fhirUser; a backend service: system/Appointment.rs",
    )
    jwks_uri: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_REDIRECT_URI_CHARS,
        description="A backend service: the URL of its public keys (JWKS); or give jwks",
        json_schema_extra=stated(pattern=REDIRECT_URI_PATTERN),
    )
    jwks: dict[str, Any] | None = Field(
        None, description="A backend service: its public keys as a JWKS (RSA or EC P-384, each with a kid)"
    )
    launch_url: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_REDIRECT_URI_CHARS,
        description="An app an EHR launches: where the record system sends the browser (docs/smart.md#ehr-launch)",
        json_schema_extra=stated(pattern=REDIRECT_URI_PATTERN),
    )


def app_json(client: ClientInfo) -> dict[str, Any]:
    return {
        "id": client.id,
        "client_id": client.client_id,
        "name": client.name,
        "kind": client.kind.value,
        "redirect_uris": list(client.redirect_uris),
        "allowed_scopes": list(client.allowed_scopes),
        "active": client.active,
        "created_at": client.created_at.isoformat(),
        "jwks_uri": client.jwks_uri,
        "key_ids": list(client.key_ids),
        "launch_url": client.launch_url,
    }


@router.post("/smart-apps", status_code=201, responses=SUBMIT_RESPONSES)
async def register_app(rt: RuntimeDep, actor: AdminDep, body: AppIn) -> dict[str, Any]:
    """Register a SMART app or a backend service. A confidential app's `client_secret` is in this answer only:
    only its hash is kept. A backend service gives its public keys (`jwks_uri` or `jwks`) instead."""
    new = await clients.register(
        rt, actor, name=body.name, kind=body.kind, redirect_uris=body.redirect_uris,
        allowed_scopes=body.allowed_scopes, keys=clients.Keys(body.jwks_uri, body.jwks), launch_url=body.launch_url,
    )  # fmt: skip
    return {**app_json(new.info), "client_secret": new.secret}


@router.get("/smart-apps", responses=ROLE_READ_RESPONSES)
async def list_apps(rt: RuntimeDep, actor: AdminDep) -> dict[str, Any]:
    """Every registered SMART app (never a secret)."""
    return {"smart_apps": [app_json(c) for c in await clients.list_clients(rt, actor)]}


@router.get("/smart-apps/{app_id}", responses=ROLE_READ_RESPONSES)
async def get_app(rt: RuntimeDep, actor: AdminDep, app_id: AppId) -> dict[str, Any]:
    """One SMART app."""
    return app_json(await clients.get_client(rt, actor, app_id))


@router.post("/smart-apps/{app_id}/deactivate", responses=SUBMIT_RESPONSES)
async def deactivate_app(rt: RuntimeDep, actor: AdminDep, app_id: AppId) -> dict[str, Any]:
    """Deactivate an app: its tokens are refused from the next request on and it cannot start a launch."""
    return app_json(await clients.set_active(rt, actor, app_id, active=False))


@router.post("/smart-apps/{app_id}/reactivate", responses=SUBMIT_RESPONSES)
async def reactivate_app(rt: RuntimeDep, actor: AdminDep, app_id: AppId) -> dict[str, Any]:
    """Reactivate an app: its unexpired, unrevoked tokens work again."""
    return app_json(await clients.set_active(rt, actor, app_id, active=True))
