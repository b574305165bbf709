"""Log in and out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from doctordesk.domain.inputs import TEXT_PATTERN
from doctordesk.services.accounts import auth, password_links, reauth
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.web.deps import ActorDep, DeviceDep, RuntimeDep
from doctordesk.web.responses import INVALID, TOO_LARGE, UNAUTHORIZED, error_doc

router = APIRouter(prefix="/auth", tags=["auth"])


def text_form(description: str, *, max_length: int, stated_min_length: int = 1) -> Any:
    """A required one-line text form field whose rule (no control characters) /openapi.json states.
    ``stated_min_length``: a longer minimum the service judges itself (its own message), stated in the schema."""
    return Form(
        min_length=1,
        max_length=max_length,
        description=description,
        json_schema_extra={"pattern": TEXT_PATTERN, "minLength": stated_min_length},
    )


def user_json(actor: Any) -> dict[str, Any]:
    return {
        "id": actor.user_id,
        "username": actor.username,
        "role": actor.role.value,
        "display_name": actor.display_name,
        "language": actor.language,
    }


def login_json(token: str, expires_in: int, actor: Any) -> dict[str, Any]:
    return {"access_token": token, "token_type": "bearer", "expires_in": expires_in, "user": user_json(actor)}


@router.post(
    "/login",
    responses={
        401: error_doc(
            "UNAUTHORIZED: wrong username, password or code; MFA_REQUIRED: the second factor is missing "
            "(`factors`); MFA_ENROLMENT_REQUIRED: the role needs a second factor, set one up with "
            "`enrolment_token`"
        ),
        413: TOO_LARGE,
        422: INVALID,
        429: error_doc(
            "TOO_MANY_REQUESTS: too many failed logins for this username from this address, or for this username "
            "from everywhere (Retry-After)"
        ),
    },
)
async def login(
    request: Request,
    rt: RuntimeDep,
    device: DeviceDep,
    username: Annotated[str, text_form("No control characters", max_length=auth.MAX_USERNAME)],
    password: Annotated[str, text_form("No control characters", max_length=auth.MAX_PASSWORD)],
    otp: Annotated[
        str,
        Form(
            max_length=32,
            description="The authenticator app's current code, or a recovery code; no control characters",
            json_schema_extra={"pattern": TEXT_PATTERN},
        ),
    ] = "",
) -> dict[str, Any]:
    """Exchange a username and password (and, for a user with a second factor, a code) for a bearer access
    token."""
    client_host = request.client.host if request.client else None
    result = await auth.login(
        rt, request.app.state.passwords, username, password, client_host=client_host, device=device, otp=otp or None
    )
    return login_json(result.access_token, result.expires_in, result.actor)


@router.post(
    "/password-link",
    responses={
        404: error_doc("NOT_FOUND: the link expired, was already used or replaced, or its user is deactivated"),
        413: TOO_LARGE,
        422: INVALID,
    },
)
async def use_password_link(
    request: Request,
    rt: RuntimeDep,
    token: Annotated[str, text_form("The token from the one-time link", max_length=128)],
    password: Annotated[
        str,
        text_form(
            f"The new password: {MIN_PASSWORD} to {MAX_PASSWORD} characters, no control characters",
            max_length=MAX_PASSWORD,
            stated_min_length=MIN_PASSWORD,
        ),
    ],
) -> dict[str, Any]:
    """Set one's own password through a one-time link an admin made; then sign in with it. The user's other
    sessions end."""
    username = await password_links.use_link(rt, request.app.state.passwords, token, password)
    return {"username": username}


@router.post(
    "/reauthenticate",
    status_code=204,
    responses={
        401: UNAUTHORIZED,
        413: TOO_LARGE,
        422: error_doc("FIELDS_VALIDATION_ERROR: `password` wrong, or `otp` missing (`factors`) or wrong"),
        429: error_doc("TOO_MANY_REQUESTS: counted with the failed logins of this username (Retry-After)"),
    },
)
async def reauthenticate(
    request: Request,
    rt: RuntimeDep,
    actor: ActorDep,
    password: Annotated[str, text_form("No control characters", max_length=auth.MAX_PASSWORD)],
    otp: Annotated[
        str,
        Form(
            max_length=32,
            description="With a second factor: the authenticator app's current code, or a recovery code",
            json_schema_extra={"pattern": TEXT_PATTERN},
        ),
    ] = "",
) -> Response:
    """Confirm it is you with your password (and code, with a second factor), as at sign-in and counted by the
    same throttle: the session may then change how the account signs in for ``DOCTORDESK_REAUTH_SECONDS``
    (docs/accounts.md#recent-authentication). Passkeys: ``POST /auth/reauthenticate/passkey``."""
    client_host = request.client.host if request.client else None
    await reauth.with_password(
        rt, request.app.state.passwords, actor, password=password, otp=otp or None, client_host=client_host
    )
    return Response(status_code=204)


@router.post("/logout", status_code=204, responses={401: UNAUTHORIZED})
async def logout(rt: RuntimeDep, actor: ActorDep) -> Response:
    """Revoke the current access token (its open streams close too)."""
    await auth.logout(rt, actor)
    return Response(status_code=204)


@router.get("/me", responses={401: UNAUTHORIZED})
async def me(actor: ActorDep) -> dict[str, Any]:
    """The user behind the access token."""
    return user_json(actor)
