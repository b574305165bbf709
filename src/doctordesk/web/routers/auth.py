"""Log in and out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from doctordesk.services import auth
from doctordesk.web.deps import ActorDep, RuntimeDep

router = APIRouter(prefix="/auth", tags=["auth"])


def user_json(actor: Any) -> dict[str, Any]:
    return {
        "id": actor.user_id,
        "username": actor.username,
        "role": actor.role.value,
        "display_name": actor.display_name,
    }


@router.post(
    "/login",
    responses={
        401: {"description": "Wrong username or password"},
        429: {"description": "Too many failed logins"},
    },
)
async def login(
    request: Request, rt: RuntimeDep, username: Annotated[str, Form()], password: Annotated[str, Form()]
) -> dict[str, Any]:
    """Exchange a username and password for a bearer access token."""
    result = await auth.login(rt, request.app.state.passwords, username, password)
    return {
        "access_token": result.access_token,
        "token_type": "bearer",
        "expires_in": result.expires_in,
        "user": user_json(result.actor),
    }


@router.post("/logout", status_code=204, responses={401: {"description": "No valid token"}})
async def logout(rt: RuntimeDep, actor: ActorDep) -> Response:
    """Revoke the current access token (its open streams close too)."""
    await auth.logout(rt, actor)
    return Response(status_code=204)


@router.get("/me")
async def me(actor: ActorDep) -> dict[str, Any]:
    """The user behind the access token."""
    return user_json(actor)
