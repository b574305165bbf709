"""The real-time stream (SSE) and its tickets."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.security import HTTPAuthorizationCredentials
from starlette.datastructures import Headers, QueryParams
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from doctordesk.domain.errors import DomainError, ValidationFailed
from doctordesk.domain.texts import N_
from doctordesk.realtime.presence import recall_presence
from doctordesk.realtime.sse import HEADERS, EventStreamResponse
from doctordesk.runtime import Runtime
from doctordesk.services import streams
from doctordesk.web.deps import CLIENT_ID, CLIENT_ID_PATTERN, ActorDep, RuntimeDep, bearer
from doctordesk.web.endpoints import patch_templates
from doctordesk.web.errors import error_response, unexpected_response
from doctordesk.web.responses import ERROR
from doctordesk.web.security import with_security_headers

router = APIRouter(prefix="/profile", tags=["real-time"])
# Public: what a client needs before it signs in to read real-time messages (like /openapi.json, which says as much).
endpoints_router = APIRouter(prefix="/realtime", tags=["real-time"])
STREAM_PATH = "/profile/stream"
# Every open stream's response headers, security headers included: one list for all of them.
STREAM_HEADERS = with_security_headers(STREAM_PATH, HEADERS)

SSE_EXAMPLE = "retry: 3000\nid: 1795291947000-1\ndata: \n\nid: 1795291947000-2\ndata: Timeout /profile/appointments\n\n"

# One event as a client's SSE parser reads it (the description of `text/event-stream` before OpenAPI 3.2: the schema
# describes each event). The `retry:` line comes once, with the first event.
SSE_EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One event: `id: <ms>-<n>` and `data: <message>` (a real-time message, docs/realtime.md; empty: "
    "a heartbeat); the first also carries `retry: <ms>`",
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
        "data": {"type": "string", "pattern": "^(Timeout( /[!-~]*)?|/[!-~]*)?$"},
        "event": {"type": "string", "enum": ["message"], "description": "Not sent: the default event type"},
        "retry": {"type": "integer", "minimum": 0},
    },
    "required": ["id", "data"],
}

STREAM_DESCRIPTION = """Server-sent events (`text/event-stream`) carrying real-time messages (docs/realtime.md):
each event has an `id` and `data` holding `Timeout <endpoint>`, `Timeout`, `<endpoint>` or nothing (a heartbeat).

Authenticate with `Authorization: Bearer <token>`, or — for a browser's EventSource, which cannot send headers —
with `?ticket=` from `POST /profile/stream/ticket` (single use, short-lived). Name the client with `X-Client-Id` or
`?client=` (the same id the client sends on its screen requests): messages are chosen for that client's active
screen. A reconnect sending `Last-Event-ID` that missed a message (or is malformed) starts with `Timeout`."""


@router.get(
    "/stream",
    response_class=EventStreamResponse,
    status_code=200,
    description=STREAM_DESCRIPTION,
    responses={
        200: {
            "description": "The event stream: `retry: <ms>` once, then events of `id: <ms>-<n>` and `data: <message>`",
            "content": {
                "text/event-stream": {
                    "schema": SSE_EVENT_SCHEMA,
                    "example": SSE_EXAMPLE,
                }
            },
        },
        401: ERROR,
        422: ERROR,
        503: ERROR,
    },
)
async def stream(
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ticket: Annotated[str | None, Query(description="A stream ticket (instead of the Authorization header)")] = None,
    client: Annotated[
        str | None,
        Query(
            description="The client id (instead of the X-Client-Id header)",
            json_schema_extra={"pattern": CLIENT_ID_PATTERN},
        ),
    ] = None,
    x_client_id: Annotated[
        str | None,
        Header(
            description="A stable id of this client (tab or app); this or `client` is required",
            json_schema_extra={"pattern": CLIENT_ID_PATTERN},
        ),
    ] = None,
    last_event_id: Annotated[str | None, Header(description="The id of the last event received")] = None,
) -> EventStreamResponse:
    token = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else None
    return await open_event_stream(
        rt, token=token, ticket=ticket, client=client_named(x_client_id, client), last_event_id=last_event_id
    )


async def open_event_stream(
    rt: Runtime, *, token: str | None, ticket: str | None, client: str | None, last_event_id: str | None
) -> EventStreamResponse:
    """Authenticate (ticket or bearer token), name the client, and open its stream on this instance's hub. The
    caller is authenticated before the client id is judged (401 before 422), and a ticket is used up only by a
    stream that opens."""
    if ticket is not None:
        if not _names_client(client):
            await streams.check_ticket(rt, ticket)
            raise _unnamed()
        grant = await streams.grant_for_ticket(rt, ticket)
    else:
        grant = await streams.grant_for_token(rt, token)
        if not _names_client(client):
            raise _unnamed()
    cid = str(client)
    await recall_presence(rt.hub, rt.bus, cid)
    hub = rt.hub
    missed = hub.missed(cid, last_event_id[:64] if last_event_id is not None else None)
    handle = hub.open(cid, user_id=grant.actor.user_id, token_id=grant.actor.token_id, expires_at=grant.expires_at)
    rt.metrics.open_streams.inc()
    return EventStreamResponse(
        hub,
        handle,
        retry_ms=rt.settings.sse_retry_ms,
        first=hub.recovery_message() if missed else None,
        on_close=rt.metrics.open_streams.dec,
        raw_headers=STREAM_HEADERS,
    )


def client_named(header: str | None, parameter: str | None) -> str | None:
    """The client id of a stream request: the header, else the parameter. Both are judged when both are sent: a
    malformed one is what the request names (and is refused once the caller is authenticated)."""
    for value in (header, parameter):
        if value is not None and not _names_client(value):
            return value
    return header if header is not None else parameter


def _unnamed() -> ValidationFailed:
    message = N_("Name the client (X-Client-Id header or client parameter): up to 64 of A-Z a-z 0-9 - _.")
    return ValidationFailed(fields={"X-Client-Id": message})


def _names_client(client: str | None) -> bool:
    return client is not None and CLIENT_ID.fullmatch(client) is not None


class StreamFastPath:
    """Serves ``GET /profile/stream`` ahead of the framework's whole middleware stack and routing (the same rules
    as the route, which stays for the API description). Every write to an open stream then resumes a short chain
    of coroutines and goes straight to the server's ``send``: what makes a fan-out to thousands of streams cheap.
    It answers errors and adds the security headers itself, as the skipped middleware would."""

    def __init__(self, app: ASGIApp, *, runtime: Runtime) -> None:
        self.app = app
        self.runtime = runtime

    @staticmethod
    def serves(scope: Scope) -> bool:
        return bool(scope["type"] == "http" and scope["path"] == STREAM_PATH and scope["method"] == "GET")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.serves(scope):
            await self.app(scope, receive, send)
            return
        await self.serve(scope, receive, send)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Open the stream of a ``GET /profile/stream`` (``serves``), or answer why not."""
        # The request is read in a call of its own: what reading it made (headers, query, the credentials) is
        # gone before the stream's long wait, rather than kept in this frame for as long as the stream is open.
        response = await self._response(scope)
        await response(scope, receive, send)

    async def _response(self, scope: Scope) -> Response:
        headers = Headers(raw=scope["headers"])  # not ``scope=``: that copies the list into the scope
        query = QueryParams(scope.get("query_string", b""))
        authorization = headers.get("authorization", "")
        scheme, _, credentials = authorization.partition(" ")
        response: Response
        try:
            response = await open_event_stream(
                self.runtime,
                token=credentials.strip() if scheme.lower() == "bearer" else None,
                ticket=query.get("ticket"),
                client=client_named(headers.get("x-client-id"), query.get("client")),
                last_event_id=headers.get("last-event-id"),
            )
        except DomainError as exc:
            response = error_response(exc)
        except Exception as exc:  # the skipped middleware's job: the error shape, never a traceback
            response = unexpected_response(exc)
        if not isinstance(response, EventStreamResponse):  # an open stream's headers have them already
            response.raw_headers = with_security_headers(STREAM_PATH, response.raw_headers)
        return response


@router.post("/stream/ticket", responses={401: ERROR})
async def stream_ticket(rt: RuntimeDep, actor: ActorDep) -> dict[str, Any]:
    """A single-use ticket that opens one stream (`GET /profile/stream?ticket=...`) within `expires_in` seconds."""
    issued = await streams.issue_ticket(rt, actor)
    return {"ticket": issued.ticket, "expires_in": issued.expires_in}


@endpoints_router.get("/endpoints", responses={304: {"description": "Not modified (the `ETag` matched)"}})
async def patch_endpoints(request: Request) -> Response:
    """The PATCH endpoints a real-time message may name, as path templates (`patch_endpoints`): what a client
    needs to check a message's endpoint, a few kilobytes instead of the whole `/openapi.json`. Public, like the
    API description; `Cache-Control: no-cache` with an `ETag`, so a client's copy is confirmed with a 304."""
    body, tag = _endpoints_document(request.app)
    headers = {"ETag": tag, "Cache-Control": "no-cache"}
    if tag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def _endpoints_document(app: Any) -> tuple[bytes, str]:
    """The document and its ETag, made once per app (its routes are fixed once it serves)."""
    made: tuple[bytes, str] | None = getattr(app.state, "patch_endpoints", None)
    if made is None:
        body = json.dumps({"patch_endpoints": patch_templates(app)}, separators=(",", ":")).encode()
        made = (body, f'"{hashlib.sha256(body).hexdigest()[:20]}"')
        app.state.patch_endpoints = made
    return made
