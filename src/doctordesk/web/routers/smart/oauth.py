"""SMART App Launch's OAuth 2 endpoints (docs/smart.md): the discovery document, the authorization endpoint (which
sends the browser to the consent page of the web app), the token endpoint, revocation and the id tokens' key set.
Errors are OAuth 2's JSON (``{"error", "error_description"}``), not the service's error body: OAuth clients read
that shape."""

from __future__ import annotations

from typing import Annotated, Any

from authlib.oauth2.rfc6749 import errors as oauth
from authlib.oauth2.rfc6749.util import extract_basic_authorization
from authlib.oauth2.rfc7523.client import ASSERTION_TYPE
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from doctordesk.domain.errors import TooManyRequests
from doctordesk.i18n import _
from doctordesk.services.smart import authorize, keys, tokens
from doctordesk.services.smart.capability import openid_configuration, smart_configuration
from doctordesk.web.deps import RuntimeDep
from doctordesk.web.responses import form_body

router = APIRouter(tags=["SMART App Launch"])

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_OAUTH_ERROR = {
    "description": "OAuth 2 error: `error` (invalid_request, invalid_client, invalid_grant, unsupported_grant_type,"
    " invalid_scope) and `error_description`",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}},
                "required": ["error"],
            }
        }
    },
}
_TOKEN_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _OAUTH_ERROR,
    401: _OAUTH_ERROR,
    429: {
        **_OAUTH_ERROR,
        "description": "`slow_down`: too many wrong client secrets for this client (Retry-After), in OAuth 2's shape",
    },
}
_TEXT = {"type": "string", "maxLength": 4096}
TOKEN_BODY = form_body(
    {
        "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token", "client_credentials"]},
        "code": _TEXT,
        "redirect_uri": _TEXT,
        "code_verifier": _TEXT,
        "refresh_token": _TEXT,
        "scope": _TEXT,
        "client_id": _TEXT,
        "client_secret": _TEXT,
        "client_assertion_type": {"type": "string", "enum": [ASSERTION_TYPE]},
        "client_assertion": {"type": "string", "maxLength": 8192},
    },
    required=("grant_type",),
)
REVOKE_BODY = form_body(
    {
        "token": _TEXT,
        "token_type_hint": {"type": "string", "enum": ["access_token", "refresh_token"]},
        "client_id": _TEXT,
        "client_secret": _TEXT,
    },
    required=("token",),
)
Param = Annotated[str | None, Query()]


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def throttled(error: TooManyRequests) -> Response:
    """Client authentication throttled (docs/smart.md#client-secrets): 429 in OAuth 2's error shape, which OAuth
    clients read (``slow_down``, RFC 8628's word for "ask less often"), with Retry-After."""
    body = {"error": "slow_down", "error_description": _(error.message)}
    headers = {**NO_STORE, **({"Retry-After": str(error.retry_after)} if error.retry_after else {})}
    return JSONResponse(body, status_code=429, headers=headers)


def oauth_error(error: oauth.OAuth2Error) -> Response:
    """An Authlib error as OAuth 2 answers it: a redirect back to the app, or JSON, never cached."""
    status, body, headers = error()
    if status == 302:
        return RedirectResponse(dict(headers)["Location"], status_code=302, headers=NO_STORE)
    extra = {k: v for k, v in headers if k.lower() == "www-authenticate"}
    return JSONResponse(dict(body), status_code=status, headers={**NO_STORE, **extra})


@router.get("/fhir/.well-known/smart-configuration")
async def smart_configuration_document(request: Request) -> JSONResponse:
    """SMART's discovery document: the endpoints, PKCE S256, the capabilities and scopes supported."""
    return JSONResponse(smart_configuration(_base(request)))


@router.get("/.well-known/openid-configuration")
async def openid_configuration_document(request: Request) -> JSONResponse:
    """OpenID Connect discovery at the issuer the id tokens name: the same endpoints as SMART's document."""
    return JSONResponse(openid_configuration(_base(request)))


@router.get("/oauth/jwks")
async def jwks(rt: RuntimeDep) -> JSONResponse:
    """The public key(s) id tokens are signed with (RS256)."""
    return JSONResponse(await keys.key_set(rt))


@router.get(
    "/oauth/authorize",
    status_code=303,
    responses={302: {"description": "An error, back at the app's redirect URI"}, 400: _OAUTH_ERROR},
)
async def authorize_endpoint(
    rt: RuntimeDep,
    request: Request,
    response_type: Param = None,
    client_id: Param = None,
    redirect_uri: Param = None,
    scope: Param = None,
    state: Param = None,
    aud: Param = None,
    code_challenge: Param = None,
    code_challenge_method: Param = None,
    nonce: Param = None,
    launch: Param = None,
) -> Response:
    """Start a launch: checks the request and sends the browser (303) to the web app's consent page, where the
    user signs in if needed and allows or denies it. Bad client or redirect URI: 400 here; any other error goes
    back to the app's redirect URI."""
    params = authorize.AuthorizeParams(
        response_type,
        client_id,
        redirect_uri,
        scope,
        state,
        aud,
        code_challenge,
        code_challenge_method,
        nonce,
        launch,
    )
    try:
        page = await authorize.start(rt, params, fhir_base=_base(request) + "/fhir")
    except oauth.OAuth2Error as refused:
        return oauth_error(refused)
    return RedirectResponse(page, status_code=303, headers=NO_STORE)


async def _form(request: Request) -> tuple[dict[str, str], tokens.ClientCredentials]:
    form = await request.form()
    fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
    basic_id, basic_secret = extract_basic_authorization(request.headers)
    address = request.client.host if request.client else None
    if basic_id is not None:
        if "client_secret" in fields:
            raise oauth.InvalidRequestError("Authenticate the client once: HTTP Basic or the form.")
        return fields, tokens.ClientCredentials(basic_id, basic_secret, basic=True, address=address)
    return fields, tokens.ClientCredentials(fields.get("client_id"), fields.get("client_secret"), address=address)


@router.post("/oauth/token", responses=_TOKEN_RESPONSES, openapi_extra=TOKEN_BODY)
async def token_endpoint(rt: RuntimeDep, request: Request) -> Response:
    """Exchange a code (with its PKCE ``code_verifier``) or a refresh token for an access token; a refresh token
    comes with ``offline_access`` and is replaced on every use; an ``id_token`` comes with ``openid``. A backend
    service asks with ``client_credentials`` and a signed ``client_assertion`` (``private_key_jwt``) for
    ``system/`` scopes."""
    try:
        fields, creds = await _form(request)
        params = tokens.TokenParams(
            fields.get("grant_type"), fields.get("code"), fields.get("redirect_uri"), fields.get("code_verifier"),
            fields.get("refresh_token"), fields.get("scope"), fields.get("client_assertion_type"),
            fields.get("client_assertion"),
        )  # fmt: skip
        issuer = tokens.Issuer(_base(request), _base(request) + "/fhir")
        body = await tokens.token(rt, request.app.state.passwords, creds, params, issuer=issuer)
    except oauth.OAuth2Error as refused:
        return oauth_error(refused)
    except TooManyRequests as refused:
        return throttled(refused)
    return JSONResponse(body, headers=NO_STORE)


@router.post("/oauth/revoke", responses=_TOKEN_RESPONSES, openapi_extra=REVOKE_BODY)
async def revoke_endpoint(rt: RuntimeDep, request: Request) -> Response:
    """Revoke an access token, or a refresh token and every token of its grant (RFC 7009: 200 whether or not the
    token was known)."""
    try:
        fields, creds = await _form(request)
        await tokens.revoke(rt, request.app.state.passwords, creds, fields.get("token"))
    except oauth.OAuth2Error as refused:
        return oauth_error(refused)
    except TooManyRequests as refused:
        return throttled(refused)
    return JSONResponse({}, headers=NO_STORE)
