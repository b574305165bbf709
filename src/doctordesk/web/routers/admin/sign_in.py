"""Admin JSON API: which roles must sign in with a second factor, and resetting a user's factors (admins only;
docs/accounts.md#second-factor)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from fastapi.responses import Response
from pydantic import Field, StrictBool

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.roles import Actor, Role
from doctordesk.services.accounts import mfa, sso_admin
from doctordesk.web.bodies import StrictBody
from doctordesk.web.deps import RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import FORBIDDEN, INVALID, NOT_FOUND, TOO_LARGE, UNAUTHORIZED

router = APIRouter(prefix="/admin", tags=["admin"])

AdminDep = Annotated[Actor, require_roles(Role.ADMIN)]
UserId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
READ: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 403: FORBIDDEN}


class PolicyIn(StrictBody):
    required: Annotated[
        dict[Role, StrictBool], Field(description="Per role: whether it must sign in with a second factor")
    ]


@router.get("/mfa-policy", responses=READ)
async def read_policy(rt: RuntimeDep, _admin: AdminDep) -> dict[str, Any]:
    """The roles that must sign in with a second factor."""
    return {"required": await mfa.read_policy(rt)}


@router.put("/mfa-policy", responses={**READ, 413: TOO_LARGE, 422: INVALID})
async def set_policy(rt: RuntimeDep, admin: AdminDep, body: PolicyIn) -> dict[str, Any]:
    """Change which roles must use a second factor (roles not named keep their setting); audited. A user of a
    required role without a factor sets one up at their next sign-in."""
    return {"required": await mfa.set_policy(rt, admin, body.required)}


@router.get("/users/{user_id}/mfa", responses={**READ, 404: NOT_FOUND})
async def user_factors(rt: RuntimeDep, _admin: AdminDep, user_id: UserId) -> dict[str, Any]:
    """What a user has set up."""
    return await mfa.status(rt, user_id)


@router.delete("/users/{user_id}/mfa", status_code=204, responses={**READ, 404: NOT_FOUND})
async def reset_factors(rt: RuntimeDep, admin: AdminDep, user_id: UserId) -> Response:
    """Remove every second factor of a user (a lost phone); audited."""
    await mfa.reset(rt, admin, user_id)
    return Response(status_code=204)


Slug = Annotated[str, Path(min_length=1, max_length=sso_admin.MAX_SLUG, pattern=sso_admin.SLUG_PATTERN)]
Claim = Annotated[str, Field(min_length=1, max_length=sso_admin.MAX_CLAIM, pattern=sso_admin.CLAIM_PATTERN)]


class ProviderIn(StrictBody):
    name: Annotated[
        str, Field(min_length=1, max_length=sso_admin.MAX_NAME, description='Shown as "Sign in with <name>"')
    ]
    issuer: Annotated[
        str,
        Field(
            min_length=sso_admin.MIN_ISSUER,
            max_length=sso_admin.MAX_ISSUER,
            description="The provider's issuer URL: https:// (plain http:// only on a loopback host with "
            "DOCTORDESK_SSO_ALLOW_HTTP_LOOPBACK in development)",
        ),
    ]
    client_id: Annotated[str, Field(min_length=1, max_length=sso_admin.MAX_CLIENT)]
    client_secret: Annotated[
        str | None,
        Field(default=None, min_length=1, max_length=sso_admin.MAX_CLIENT, description="Omit to keep the stored one"),
    ]
    match_claim: Claim = "email"
    match_field: Literal["username", "external_id"] = "username"
    role_claim: Claim | None = None
    role_map: Annotated[dict[Claim, str], Field(default_factory=dict, max_length=sso_admin.MAX_ROLE_MAP)]
    default_role: str | None = None
    create_users: bool = False
    active: bool = True


@router.get("/sso-providers", responses=READ)
async def sso_providers(rt: RuntimeDep, _admin: AdminDep) -> dict[str, Any]:
    """The configured OpenID Connect providers (never their client secrets)."""
    return {"providers": await sso_admin.listing(rt)}


@router.put("/sso-providers/{slug}", responses={**READ, 413: TOO_LARGE, 422: INVALID})
async def save_sso_provider(rt: RuntimeDep, admin: AdminDep, slug: Slug, body: ProviderIn) -> dict[str, Any]:
    """Create or change a provider: issuer, our client at it, and how its claims find users (``match_claim``
    compared with ``match_field``) and name roles of new ones (``role_claim`` through ``role_map``, else
    ``default_role``; only with ``create_users``). Audited."""
    return await sso_admin.save(rt, admin, slug, sso_admin.ProviderConfig(**body.model_dump()))


@router.delete("/sso-providers/{slug}", status_code=204, responses={**READ, 404: NOT_FOUND})
async def remove_sso_provider(rt: RuntimeDep, admin: AdminDep, slug: Slug) -> Response:
    """Remove a provider (its users stay; they sign in with a password an admin gives them)."""
    await sso_admin.remove(rt, admin, slug)
    return Response(status_code=204)
