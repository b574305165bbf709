"""FastAPI dependencies: the runtime, the authenticated actor, and a screen route's request (the actor, the client's
layout, state token and client id, in one).

Every dependency is ``async def`` although none awaits: FastAPI runs plain ``def`` dependencies in a thread pool,
which cost the unchanged poll (the service's main load) more than all its own work (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Header, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import UploadFile

from doctordesk import i18n
from doctordesk.caches.devices import DeviceHeaders
from doctordesk.domain.accounts import user_agents
from doctordesk.domain.errors import Forbidden, Unauthorized, ValidationFailed
from doctordesk.domain.integration import Integration, looks_like_key
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart.clients import looks_like_access_token
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import LAYOUTS, Layout, UpdateSet
from doctordesk.screens.state import current_client
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import auth, devices, mfa, reauth
from doctordesk.services.integration import api_keys
from doctordesk.services.smart import access as smart_access

_T = TypeVar("_T")

bearer = HTTPBearer(auto_error=False, description="The access token from POST /auth/login")


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


# The header rules, enforced here after authentication and stated in /openapi.json (HEADER_RULES).
CLIENT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
CLIENT_ID = re.compile(CLIENT_ID_PATTERN, re.ASCII)
# Device ids and push tokens: printable ASCII without spaces (what the partners' tokens are made of).
DEVICE_ID_PATTERN = rf"^[!-~]{{1,{devices.MAX_DEVICE_ID_CHARS}}}$"
PUSH_TOKEN_PATTERN = rf"^[!-~]{{1,{devices.MAX_TOKEN_CHARS}}}$"
_DEVICE_ID = re.compile(DEVICE_ID_PATTERN, re.ASCII)
_PUSH_TOKEN = re.compile(PUSH_TOKEN_PATTERN, re.ASCII)
# Where ``screen_request`` leaves the actor it authenticated in the request's scope: an unchanged answer is kept
# for that actor (``web/unchanged_polls.py``).
ACTOR_SCOPE_KEY = "doctordesk.actor"
# The most of an X-Screen-State header read: a state token with a list's four windows and its filter fits.
MAX_STATE_CHARS = 600


@dataclass(frozen=True, slots=True)
class PushHeaders:
    """The push headers of a call as sent, checked only once the caller is authenticated."""

    device_id: str | None
    platform: str | None
    token: str | None


async def push_headers(
    x_device_id: Annotated[
        str | None,
        Header(
            description="Mobile apps: a stable id of this device (with X-Push-Platform)",
            json_schema_extra={"pattern": DEVICE_ID_PATTERN},
        ),
    ] = None,
    x_push_platform: Annotated[
        str | None, Header(description="Mobile apps: ios or android", json_schema_extra={"enum": ["ios", "android"]})
    ] = None,
    x_push_token: Annotated[
        str | None,
        Header(
            description="Mobile apps: the device's current push token (on every call)",
            json_schema_extra={"pattern": PUSH_TOKEN_PATTERN},
        ),
    ] = None,
) -> PushHeaders:
    return PushHeaders(x_device_id, x_push_platform, x_push_token)


def push_device(raw: PushHeaders) -> DeviceHeaders | None:
    """The push headers of a mobile app's call (docs/realtime.md#push); None when the call has none."""
    if raw.device_id is None and raw.platform is None and raw.token is None:
        return None
    fields: dict[str, str] = {}
    if raw.device_id is None or not _DEVICE_ID.fullmatch(raw.device_id):
        fields["X-Device-Id"] = Text(
            "Required with push headers: 1 to {count} printable ASCII characters, no spaces.",
            count=devices.MAX_DEVICE_ID_CHARS,
        )
    platform = (raw.platform or "").lower()
    if platform not in devices.PLATFORMS:
        fields["X-Push-Platform"] = N_("Use ios or android.")
    if raw.token is not None and not _PUSH_TOKEN.fullmatch(raw.token):
        fields["X-Push-Token"] = Text(
            "1 to {count} printable ASCII characters, no spaces.", count=devices.MAX_TOKEN_CHARS
        )
    if fields:
        raise ValidationFailed(fields=fields)
    return DeviceHeaders(device_key=raw.device_id or "", platform=platform, token=raw.token)


def speak(actor: Actor) -> None:
    """The user's stored language, when they chose one, wins over the request's Accept-Language."""
    if actor.language is not None:
        i18n.use(actor.language)


def bearer_token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else None


async def current_actor(
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    raw_push: Annotated[PushHeaders, Depends(push_headers)],
) -> Actor:
    """The authenticated actor (401 first: an anonymous call learns nothing about its other headers), then the
    push headers checked and recorded."""
    actor = await auth.authenticate(rt, bearer_token(credentials))
    speak(actor)
    device = push_device(raw_push)
    if device is not None:
        await devices.record(rt, actor, device)
    return actor


ActorDep = Annotated[Actor, Depends(current_actor)]


async def enrolling_actor(
    rt: RuntimeDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> mfa.Enrolling:
    """Who sets up a second factor: the bearer of an access token, or of the enrolment token a sign-in handed out
    because the role needs a factor the user lacks (docs/accounts.md#second-factor). Only the factor routes take
    the latter."""
    token = bearer_token(credentials)
    try:
        actor = await auth.authenticate(rt, token)
    except Unauthorized:
        return await mfa.enrolment_actor(rt, token)
    speak(actor)
    return mfa.Enrolling(actor=actor)


EnrollingDep = Annotated[mfa.Enrolling, Depends(enrolling_actor)]


async def recent_enrolling(rt: RuntimeDep, who: EnrollingDep) -> mfa.Enrolling:
    """``EnrollingDep`` that proved who it is recently: the doors that change how an account signs in
    (403 REAUTHENTICATION_REQUIRED otherwise, before anything is read from the body or written;
    docs/accounts.md#recent-authentication)."""
    await reauth.require_recent(rt, who)
    return who


async def recent_actor(rt: RuntimeDep, actor: ActorDep) -> Actor:
    """``ActorDep`` that proved who it is recently (as ``recent_enrolling``)."""
    await reauth.require_recent(rt, actor)
    return actor


RecentEnrollingDep = Annotated[mfa.Enrolling, Depends(recent_enrolling)]
RecentActorDep = Annotated[Actor, Depends(recent_actor)]


async def signing_in_device(request: Request) -> user_agents.SessionDevice | None:
    """What a sign-in comes from, as its session is named on the security page (Firefox, Windows), read from
    the User-Agent header, which itself is kept nowhere (docs/accounts.md#security-page). Parsed in a worker thread:
    the first parse of a process loads the rules (about half a second)."""
    header = request.headers.get("user-agent")
    if not header:
        return None
    return await asyncio.to_thread(user_agents.describe, header)


DeviceDep = Annotated[user_agents.SessionDevice | None, Depends(signing_in_device)]

# The integration API's credentials: an API key, as a bearer token or in X-Api-Key (docs/integration.md).
api_key_bearer = HTTPBearer(
    auto_error=False, scheme_name="ApiKeyBearer", description="An API key (ddk_...) of a service account"
)
api_key_header = APIKeyHeader(
    name="X-Api-Key", auto_error=False, description="An API key (ddk_...) of a service account"
)


async def integration_caller(
    request: Request,
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(api_key_bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Integration:
    """The service account behind the call's API key (401 without a valid one; user tokens are not API keys). A
    call sending both headers must send the same key in both: any other Authorization beside X-Api-Key (another
    scheme, another token) is refused, not ignored."""
    bearer_key = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else None
    if header_key is not None and "authorization" in request.headers and bearer_key != header_key:
        raise Unauthorized(N_("Send the API key once: in Authorization or in X-Api-Key."))
    return await api_keys.authenticate(rt, header_key or bearer_key)


IntegrationDep = Annotated[Integration, Depends(integration_caller)]


def require_roles(*roles: Role):  # type: ignore[no-untyped-def]
    """A dependency that admits only the given roles (403 otherwise)."""

    async def check(actor: ActorDep) -> Actor:
        if actor.role not in roles:
            raise Forbidden()
        return actor

    return Depends(check)


def layout(value: str | None) -> Layout:
    """The ``X-Layout`` header's layout (desktop when absent; ValidationFailed when unknown, or sent empty)."""
    layout = "desktop" if value is None else value.lower()
    if layout not in LAYOUTS:
        raise ValidationFailed(fields={"X-Layout": N_("Use desktop or mobile.")})
    return layout  # type: ignore[return-value,unused-ignore]


def client_id(value: str | None) -> str | None:
    """A valid client id, or None when absent (ValidationFailed when malformed)."""
    if value is None:
        return None
    if not CLIENT_ID.fullmatch(value):
        raise ValidationFailed(fields={"X-Client-Id": N_("Up to 64 letters, digits, '-' or '_'.")})
    return value


# --- the screen request in one dependency (the poll path) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScreenRequest:
    """Everything a screen route needs from a request: the runtime, the actor, the layout, the state token and the
    client id."""

    rt: Runtime
    actor: Actor
    layout: Layout
    state: str | None
    client_id: str | None

    def viewing(self, build: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """The screen ``build`` makes for this request: ``build(rt, actor, *args, layout=…, client_id=…)``."""
        return build(self.rt, self.actor, *args, layout=self.layout, client_id=self.client_id, **kwargs)

    async def submit(
        self, action: Callable[..., Awaitable[UpdateSet]], *args: Any, page: Viewing, **kwargs: Any
    ) -> dict[str, Any]:
        """A screen action's answer for this request: ``action(rt, actor, *args, page=…, state=…)``'s update set."""
        return (await action(self.rt, self.actor, *args, page=page, state=self.state, **kwargs)).to_json()


async def screen_request(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> ScreenRequest:
    """The actor (the same checks as ``ActorDep``, push headers included), the layout, the state token (at most
    ``MAX_STATE_CHARS`` characters are kept) and the client id, read straight from the headers. Every client polls
    all the time, and FastAPI's per-parameter header validation cost the unchanged poll more than its own work;
    here it is one dependency (docs/benchmarks.md). The headers are documented with ``SCREEN_HEADERS`` on the route."""
    headers = request.headers
    rt: Runtime = request.app.state.runtime
    actor = await auth.authenticate(rt, bearer_token(credentials))
    speak(actor)
    # Every header is judged before the device is recorded: a refused call writes nothing.
    device = push_device(
        PushHeaders(headers.get("x-device-id"), headers.get("x-push-platform"), headers.get("x-push-token"))
    )
    screen_layout, cid = layout(headers.get("x-layout")), client_id(headers.get("x-client-id"))
    if device is not None:
        await devices.record(rt, actor, device)
    request.scope[ACTOR_SCOPE_KEY] = actor
    current_client.set(cid)
    state = headers.get("x-screen-state")
    return ScreenRequest(
        rt=rt, actor=actor, layout=screen_layout, state=state[:MAX_STATE_CHARS] if state else None, client_id=cid
    )


ScreenRequestDep = Annotated[ScreenRequest, Depends(screen_request)]


def _header(name: str, description: str, **rules: Any) -> dict[str, Any]:
    schema = {"type": "string", **rules}
    return {"name": name, "in": "header", "required": False, "schema": schema, "description": description}


# OpenAPI parameters of a route that takes ScreenRequestDep, with the rules screen_request enforces (after
# authentication: an anonymous call gets 401 whatever its headers).
SCREEN_HEADERS: dict[str, Any] = {
    "parameters": [
        _header("X-Layout", "desktop (default) or mobile", enum=["desktop", "mobile"]),
        _header("X-Screen-State", "PATCH: the state token of the client's page (an unknown one is a reset)"),
        _header("X-Client-Id", "A stable id of this client (tab or app)", pattern=CLIENT_ID_PATTERN),
        _header(
            "X-Device-Id",
            "Mobile apps: a stable id of this device (push headers: all or none)",
            pattern=DEVICE_ID_PATTERN,
        ),
        _header("X-Push-Platform", "Mobile apps: ios or android", enum=["ios", "android"]),
        _header(
            "X-Push-Token", "Mobile apps: the device's current push token (on every call)", pattern=PUSH_TOKEN_PATTERN
        ),
    ]
}


async def form_fields(request: Request) -> dict[str, str]:
    """The submitted form as name → text (the first value of each name); files are refused here."""
    form = await request.form()
    out: dict[str, str] = {}
    for key, value in form.multi_items():
        if isinstance(value, UploadFile):
            raise ValidationFailed(fields={key: N_("Files are not accepted here.")})
        out.setdefault(key, value)
    return out


FormDep = Annotated[dict[str, str], Depends(form_fields)]


async def fhir_caller(
    request: Request,
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Actor | Integration:
    """The FHIR interface's caller: a service account by its API key (bearer ``ddk_...`` or X-Api-Key), a user by
    their access token (docs/fhir.md#access), or a user through an app's SMART access token (``ddat_...``), whose
    scopes must allow the interaction (docs/smart.md#scopes)."""
    token = bearer_token(credentials)
    if header_key is not None:
        if token is not None and token != header_key:
            raise Unauthorized(N_("Send one credential: in Authorization or in X-Api-Key."))
        return await api_keys.authenticate(rt, header_key)
    if token is not None and looks_like_key(token):
        return await api_keys.authenticate(rt, token)
    if token is not None and looks_like_access_token(token):
        path = request.url.path.removeprefix("/fhir")
        actor = await smart_access.fhir_actor(rt, token, method=request.method, path=path)
        speak(actor)
        return actor
    return await auth.authenticate(rt, token)


FhirCallerDep = Annotated[Actor | Integration, Depends(fhir_caller)]
