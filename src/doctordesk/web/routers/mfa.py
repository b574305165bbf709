"""Second factors of one's own account: an authenticator app (TOTP), recovery codes, passkeys; and signing in
with a passkey (docs/accounts.md#second-factor)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BeforeValidator, Field, WithJsonSchema

from doctordesk.domain.accounts.user_agents import SessionDevice
from doctordesk.screens.security import qr_data_url
from doctordesk.services.accounts import mfa, passkeys
from doctordesk.web.bodies import StrictBody
from doctordesk.web.deps import ActorDep, DeviceDep, RecentActorDep, RecentEnrollingDep, RuntimeDep
from doctordesk.web.responses import INVALID, TOO_LARGE, UNAUTHORIZED, error_doc
from doctordesk.web.routers.auth import login_json

router = APIRouter(prefix="/auth", tags=["auth"])

REAUTH = error_doc(
    "REAUTHENTICATION_REQUIRED: sign in again or re-authenticate first (docs/accounts.md#recent-authentication)"
)
FACTOR_RESPONSES: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 403: REAUTH, 413: TOO_LARGE, 422: INVALID}


class CodeIn(StrictBody):
    code: Annotated[str, Field(min_length=1, max_length=32, description="The current 6-digit code")]


def _passkey_credential(value: Any) -> dict[str, Any]:
    credential = passkeys.read_credential(value)
    if credential is None:
        raise ValueError(passkeys.NOT_A_PASSKEY)
    return credential


# What the browser's PublicKeyCredential.toJSON() gives, as an object or as a JSON string (docs/accounts.md#passkeys).
_CREDENTIAL_SCHEMA = {
    "description": "The PublicKeyCredential's toJSON(): an object (or that object as a JSON string)",
    "oneOf": [
        {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
        {"type": "string", "minLength": 2, "maxLength": passkeys.MAX_CREDENTIAL_CHARS},
    ],
}


class PasskeyIn(StrictBody):
    ticket: Annotated[str, Field(min_length=1, max_length=128, description="From the options call")]
    credential: Annotated[dict[str, Any], BeforeValidator(_passkey_credential), WithJsonSchema(_CREDENTIAL_SCHEMA)]


class NewPasskeyIn(PasskeyIn):
    name: Annotated[
        str,
        Field(default="", max_length=passkeys.MAX_NAME,
              description="To tell one's passkeys apart (none: \"Passkey\" in the request's language)"),
    ]  # fmt: skip


def relying_party(request: Request) -> passkeys.RelyingParty:
    """The web app's origin as this request reached us: the browser signs the origin it used, which must match."""
    host = request.url.hostname or "localhost"
    origin = f"{request.url.scheme}://{request.url.netloc}"
    return passkeys.RelyingParty(rp_id=host, origin=origin)


async def _finish(rt: Any, who: mfa.Enrolling, answer: dict[str, Any], device: SessionDevice | None) -> dict[str, Any]:
    done = await mfa.finish_enrolment(rt, who, device=device)
    if done is not None:
        token, actor = done
        answer["login"] = login_json(token, rt.settings.token_ttl_seconds, actor)
    return answer


@router.get("/mfa", responses={401: UNAUTHORIZED})
async def my_factors(rt: RuntimeDep, actor: ActorDep) -> dict[str, Any]:
    """What one has set up, and whether one's role must use a second factor."""
    return await mfa.status(rt, actor.user_id)


@router.post(
    "/mfa/totp",
    responses={401: UNAUTHORIZED, 403: error_doc("FORBIDDEN: one is active; REAUTHENTICATION_REQUIRED")},
)
async def start_totp(rt: RuntimeDep, who: RecentEnrollingDep) -> dict[str, Any]:
    """Start setting up an authenticator app: the secret, its ``otpauth://`` URI and ``qr_code``, that URI's QR
    code as an SVG ``data:`` URL (for an ``<img>``). Not active until confirmed with a code."""
    secret, uri = await mfa.start_totp(rt, who)
    return {"secret": secret, "otpauth_uri": uri, "qr_code": qr_data_url(uri)}


@router.post("/mfa/totp/confirm", responses=FACTOR_RESPONSES)
async def confirm_totp(rt: RuntimeDep, who: RecentEnrollingDep, device: DeviceDep, body: CodeIn) -> dict[str, Any]:
    """Turn the authenticator app on with a current code. ``recovery_codes``: ten one-time codes, shown only now
    (empty when unused ones exist); ``login``: the sign-in, when this completed an enrolment."""
    codes = await mfa.confirm_totp(rt, who, body.code)
    return await _finish(rt, who, {"recovery_codes": codes}, device)


@router.post(
    "/mfa/recovery-codes",
    responses={401: UNAUTHORIZED, 403: error_doc("FORBIDDEN: no second factor yet; REAUTHENTICATION_REQUIRED")},
)
async def new_recovery_codes(rt: RuntimeDep, actor: RecentActorDep) -> dict[str, Any]:
    """Ten new recovery codes, shown only now; the old ones stop working."""
    return {"recovery_codes": await mfa.new_recovery_codes(rt, actor)}


@router.post("/passkeys/options", responses={401: UNAUTHORIZED, 403: REAUTH})
async def passkey_registration_options(request: Request, rt: RuntimeDep, who: RecentEnrollingDep) -> dict[str, Any]:
    """Options for ``navigator.credentials.create`` and the ticket to send back with its answer."""
    ticket, options = await passkeys.registration_options(rt, who, relying_party(request))
    return {"ticket": ticket, "publicKey": options}


@router.post("/passkeys", responses=FACTOR_RESPONSES)
async def add_passkey(
    request: Request, rt: RuntimeDep, who: RecentEnrollingDep, device: DeviceDep, body: NewPasskeyIn
) -> dict[str, Any]:
    """Keep the passkey the browser created. ``recovery_codes`` as for the authenticator app; ``login`` when
    this completed an enrolment."""
    key_id, codes = await passkeys.register(
        rt, who, relying_party(request), ticket=body.ticket, credential=body.credential, name=body.name
    )
    return await _finish(rt, who, {"id": key_id, "recovery_codes": codes}, device)


@router.post("/passkey/options")
async def passkey_sign_in_options(request: Request, rt: RuntimeDep) -> dict[str, Any]:
    """Options for ``navigator.credentials.get`` to sign in with a passkey, and the ticket to send back."""
    ticket, options = await passkeys.sign_in_options(rt, relying_party(request))
    return {"ticket": ticket, "publicKey": options}


@router.post(
    "/passkey/login",
    responses={**FACTOR_RESPONSES, 401: error_doc("UNAUTHORIZED: unknown passkey, bad signature, used ticket")},
)
async def passkey_login(request: Request, rt: RuntimeDep, device: DeviceDep, body: PasskeyIn) -> dict[str, Any]:
    """Sign in with a passkey instead of the password and code: the same answer as ``POST /auth/login``."""
    rp = relying_party(request)
    token, actor = await passkeys.sign_in(rt, rp, ticket=body.ticket, credential=body.credential, device=device)
    return login_json(token, rt.settings.token_ttl_seconds, actor)


@router.post(
    "/reauthenticate/passkey",
    status_code=204,
    responses={**FACTOR_RESPONSES, 422: error_doc("FIELDS_VALIDATION_ERROR: not one of your passkeys, or not valid")},
)
async def reauthenticate_with_passkey(request: Request, rt: RuntimeDep, actor: ActorDep, body: PasskeyIn) -> Response:
    """Confirm it is you with one of your passkeys (a challenge from ``POST /auth/passkey/options``): the session
    may then change how the account signs in for ``DOCTORDESK_REAUTH_SECONDS``."""
    await passkeys.reauthenticate(rt, actor, relying_party(request), ticket=body.ticket, credential=body.credential)
    return Response(status_code=204)
