"""Single sign-on with the clinic's OpenID Connect provider: the login page's "Sign in with …", the provider's
redirect back, and the web app's redemption of the sign-in (docs/accounts.md#single-sign-on)."""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import Field

from doctordesk.domain.errors import DomainError
from doctordesk.services.accounts import sso
from doctordesk.web.bodies import StrictBody
from doctordesk.web.deps import DeviceDep, RuntimeDep
from doctordesk.web.responses import INVALID, NOT_FOUND, UNAUTHORIZED, error_doc
from doctordesk.web.routers.auth import login_json

router = APIRouter(prefix="/auth/sso", tags=["auth"])

COOKIE = "dd_sso_state"
Slug = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[a-z0-9-]+$")]
Param = Annotated[str | None, Query(max_length=2048)]


class RedeemIn(StrictBody):
    ticket: Annotated[str, Field(min_length=1, max_length=128, description="From the redirect's #sso= fragment")]


@router.get("")
async def providers(rt: RuntimeDep) -> dict[str, Any]:
    """The providers one may sign in with."""
    return {"providers": await sso.listed(rt)}


@router.get(
    "/{slug}/start",
    status_code=302,
    response_class=RedirectResponse,
    responses={
        302: {"description": "To the provider (Location)", "content": {}},
        401: error_doc("UNAUTHORIZED: the provider cannot be reached"),
        404: NOT_FOUND,
    },
)
async def start(request: Request, rt: RuntimeDep, slug: Slug) -> RedirectResponse:
    """Begin a sign-in: a redirect to the provider. A cookie ties the sign-in to this browser (a link to our
    callback made by someone else signs nobody in)."""
    redirect_uri = str(request.url_for("sso_callback", slug=slug))
    started = await sso.start(rt, slug, redirect_uri=redirect_uri)
    response = RedirectResponse(started.url, status_code=302)
    response.set_cookie(
        COOKIE, started.state, max_age=sso.STATE_TTL_SECONDS, path="/auth/sso", httponly=True, samesite="lax",
        secure=request.url.scheme == "https",
    )  # fmt: skip
    return response


@router.get(
    "/{slug}/callback",
    status_code=302,
    name="sso_callback",
    response_class=RedirectResponse,
    responses={302: {"description": "To the web app (Location)", "content": {}}},
)
async def callback(
    request: Request, rt: RuntimeDep, slug: Slug, code: Param = None, state: Param = None, error: Param = None
) -> RedirectResponse:
    """The provider's redirect back: on to the web app with a one-time ``#sso=`` ticket, or ``#sso-error=``."""
    cookie = request.cookies.get(COOKIE)
    target = "/#sso-error=UNAUTHORIZED"
    if not error and code and state and cookie and secrets.compare_digest(cookie, state):
        try:
            target = "/#sso=" + await sso.finish(rt, slug, state=state, code=code)
        except DomainError as refused:
            target = f"/#sso-error={refused.code}"
    response = RedirectResponse(target, status_code=302)
    response.delete_cookie(COOKIE, path="/auth/sso")
    return response


@router.post("/redeem", responses={401: UNAUTHORIZED, 422: INVALID})
async def redeem(rt: RuntimeDep, device: DeviceDep, body: RedeemIn) -> dict[str, Any]:
    """The access token for a single sign-on (the same answer as ``POST /auth/login``); each ticket once."""
    token, actor = await sso.redeem(rt, body.ticket, device=device)
    return login_json(token, rt.settings.token_ttl_seconds, actor)
