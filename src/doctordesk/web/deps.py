"""FastAPI dependencies: the runtime, the authenticated actor, and a screen route's request (the actor, the client's
layout, state token and client id, in one).

Every dependency is ``async def`` although none awaits: FastAPI runs plain ``def`` dependencies in a thread pool,
which cost the unchanged poll (the service's main load) more than all its own work (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from doctordesk.domain.errors import Forbidden, Unauthorized, ValidationFailed
from doctordesk.domain.integration import Integration
from doctordesk.domain.roles import Actor, Role
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import LAYOUTS, Layout
from doctordesk.services import api_keys, auth, devices
from doctordesk.services.device_cache import DeviceHeaders

bearer = HTTPBearer(auto_error=False, description="The access token from POST /auth/login")


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def push_device(
    x_device_id: Annotated[
        str | None, Header(description="Mobile apps: a stable id of this device (with X-Push-Platform)")
    ] = None,
    x_push_platform: Annotated[str | None, Header(description="Mobile apps: ios or android")] = None,
    x_push_token: Annotated[
        str | None, Header(description="Mobile apps: the device's current push token (on every call)")
    ] = None,
) -> DeviceHeaders | None:
    """The push headers of a mobile app's call (docs/realtime.md#push); None when the call has none."""
    if x_device_id is None and x_push_platform is None and x_push_token is None:
        return None
    fields: dict[str, str] = {}
    if not x_device_id or len(x_device_id) > devices.MAX_DEVICE_ID_CHARS or not x_device_id.isprintable():
        fields["X-Device-Id"] = f"Required with push headers: up to {devices.MAX_DEVICE_ID_CHARS} characters."
    platform = (x_push_platform or "").lower()
    if platform not in devices.PLATFORMS:
        fields["X-Push-Platform"] = "Use ios or android."
    if x_push_token is not None and (
        not x_push_token or len(x_push_token) > devices.MAX_TOKEN_CHARS or not x_push_token.isprintable()
    ):
        fields["X-Push-Token"] = f"Up to {devices.MAX_TOKEN_CHARS} printable characters."
    if fields:
        raise ValidationFailed(fields=fields)
    return DeviceHeaders(device_key=x_device_id or "", platform=platform, token=x_push_token)


async def current_actor(
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    device: Annotated[DeviceHeaders | None, Depends(push_device)],
) -> Actor:
    token = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else None
    actor = await auth.authenticate(rt, token)
    if device is not None:
        await devices.record(rt, actor, device)
    return actor


ActorDep = Annotated[Actor, Depends(current_actor)]

# The integration API's credentials: an API key, as a bearer token or in X-Api-Key (docs/integration.md).
api_key_bearer = HTTPBearer(
    auto_error=False, scheme_name="ApiKeyBearer", description="An API key (ddk_...) of a service account"
)
api_key_header = APIKeyHeader(
    name="X-Api-Key", auto_error=False, description="An API key (ddk_...) of a service account"
)


async def integration_caller(
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(api_key_bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Integration:
    """The service account behind the call's API key (401 without a valid one; user tokens are not API keys)."""
    bearer_key = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else None
    if bearer_key is not None and header_key is not None and bearer_key != header_key:
        raise Unauthorized("Send the API key once: in Authorization or in X-Api-Key.")
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
    """The ``X-Layout`` header's layout (desktop when absent; ValidationFailed when unknown)."""
    layout = (value or "desktop").lower()
    if layout not in LAYOUTS:
        raise ValidationFailed(fields={"X-Layout": "Use desktop or mobile."})
    return layout  # type: ignore[return-value,unused-ignore]


def client_id(value: str | None) -> str | None:
    """A valid client id, or None when absent (ValidationFailed when malformed)."""
    if value is None:
        return None
    if len(value) > 64 or not value.replace("-", "").replace("_", "").isalnum():
        raise ValidationFailed(fields={"X-Client-Id": "Up to 64 letters, digits, '-' or '_'."})
    return value


# Ids in paths and forms: positive and within what every database stores (no overflow reaches the driver).
MAX_ID = 2**53


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


async def screen_request(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> ScreenRequest:
    """The actor (the same checks as ``ActorDep``, push headers included), the layout, the state token (at most
    200 characters are kept) and the client id, read straight from the headers. Every client polls all the time,
    and FastAPI's per-parameter header validation cost the unchanged poll more than its own work; here it is one
    dependency (docs/benchmarks.md). The headers are documented with ``SCREEN_HEADERS`` on the route."""
    headers = request.headers
    rt: Runtime = request.app.state.runtime
    actor = await current_actor(
        rt,
        credentials,
        await push_device(headers.get("x-device-id"), headers.get("x-push-platform"), headers.get("x-push-token")),
    )
    state = headers.get("x-screen-state")
    return ScreenRequest(
        rt=rt,
        actor=actor,
        layout=layout(headers.get("x-layout")),
        state=state[:200] if state else None,
        client_id=client_id(headers.get("x-client-id")),
    )


ScreenRequestDep = Annotated[ScreenRequest, Depends(screen_request)]


def _header(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "header", "required": False, "schema": {"type": "string"}, "description": description}


# OpenAPI parameters of a route that takes ScreenRequestDep.
SCREEN_HEADERS: dict[str, Any] = {
    "parameters": [
        _header("X-Layout", "desktop (default) or mobile"),
        _header("X-Screen-State", "PATCH: the state token of the client's page"),
        _header("X-Client-Id", "A stable id of this client (tab or app)"),
        _header("X-Device-Id", "Mobile apps: a stable id of this device (with X-Push-Platform)"),
        _header("X-Push-Platform", "Mobile apps: ios or android"),
        _header("X-Push-Token", "Mobile apps: the device's current push token (on every call)"),
    ]
}
