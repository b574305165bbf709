"""The admins' webhook API (JSON, role ``admin`` only; other roles get 403): endpoints, their delivery log,
replays, test events, and the admin notices. docs/webhooks.md describes events, payloads and signing."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field, StrictBool

from doctordesk.domain.cursors import MAX_CURSOR_CHARS, decode_cursor, encode_cursor
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Role
from doctordesk.domain.webhooks.rules import MAX_URL_CHARS, SUBSCRIBABLE, URL_PATTERN
from doctordesk.domain.webhooks.views import DeliveryView, EndpointView
from doctordesk.i18n import stored
from doctordesk.services.webhooks import deliveries, endpoints
from doctordesk.services.webhooks.endpoints import EndpointChanges
from doctordesk.web.bodies import StrictBody, stated
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID, Instant, strict_int
from doctordesk.web.responses import FORBIDDEN, INVALID, NOT_FOUND, UNAUTHORIZED

RESPONSES: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 403: FORBIDDEN, 404: NOT_FOUND, 422: INVALID}
router = APIRouter(
    prefix="/admin", tags=["webhooks (admin)"], dependencies=[require_roles(Role.ADMIN)], responses=RESPONSES
)

EndpointId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
DeliveryId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
MAX_PAGE = 200
MAX_EVENT_TYPES = 50
NO_STORE = "no-store"  # answers that carry a signing secret are kept by no cache


# The service judges these rules itself (its messages); they are stated from its own constants.
URL = stated(pattern=URL_PATTERN)
URL_DESCRIPTION = (
    "http or https URL that receives the POSTs (a host name of at most 253 characters); loopback and private "
    "addresses are refused unless the server allows them"
)
EventType = Annotated[str, Field(max_length=64, json_schema_extra=stated(enum=list(SUBSCRIBABLE)))]
AT_LEAST_ONE = stated(minItems=1)


class EndpointIn(StrictBody):
    """A new endpoint."""

    url: str = Field(max_length=MAX_URL_CHARS, description=URL_DESCRIPTION, json_schema_extra=URL)
    event_types: list[EventType] = Field(
        max_length=MAX_EVENT_TYPES,
        description="Event types to receive, at least one (docs/webhooks.md#events)",
        json_schema_extra=AT_LEAST_ONE,
    )
    description: str = Field("", max_length=500)
    include_content: StrictBool = Field(False, description="Chat messages carry their text")


class EndpointPatch(StrictBody):
    """Fields to change; absent fields stay as they are."""

    url: str | None = Field(None, max_length=MAX_URL_CHARS, description=URL_DESCRIPTION, json_schema_extra=URL)
    event_types: list[EventType] | None = Field(
        None, max_length=MAX_EVENT_TYPES, description="At least one", json_schema_extra=AT_LEAST_ONE
    )
    description: str | None = Field(None, max_length=500)
    include_content: StrictBool | None = None


class DisableIn(StrictBody):
    reason: str | None = Field(None, max_length=500)


class ReplayIn(StrictBody):
    since: Instant = Field(description="Replay failed deliveries created at or after this time")


def _time(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def endpoint_json(endpoint: EndpointView) -> dict[str, Any]:
    return {
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "event_types": list(endpoint.event_types),
        "include_content": endpoint.include_content,
        "enabled": endpoint.enabled,
        "disabled_at": _time(endpoint.disabled_at),
        "disabled_reason": stored(endpoint.disabled_reason),
        "failing_since": _time(endpoint.failing_since),
        "created_at": _time(endpoint.created_at),
        "updated_at": _time(endpoint.updated_at),
    }


def delivery_json(delivery: DeliveryView, *, payload: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": delivery.id,
        "webhook_id": delivery.message_id,
        "endpoint_id": delivery.endpoint_id,
        "event_type": delivery.event_type,
        "created_at": _time(delivery.created_at),
        "status": delivery.status,
        "attempts": delivery.attempts,
        "next_attempt_at": _time(delivery.next_attempt_at),
        "delivered_at": _time(delivery.delivered_at),
        "last_attempt_at": _time(delivery.last_attempt_at),
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "replays": delivery.replays,
    }
    if payload:
        body["payload"] = delivery.payload
    return body


@router.post("/webhooks", status_code=201)
async def create(rt: RuntimeDep, actor: ActorDep, body: EndpointIn, response: Response) -> dict[str, Any]:
    """Register an endpoint. The answer's `secret` (`whsec_...`) is shown only here: receivers verify the
    `webhook-signature` header with it."""
    view, secret = await endpoints.create_endpoint(
        rt,
        actor,
        url=body.url,
        event_types=body.event_types,
        description=body.description,
        include_content=body.include_content,
    )
    response.headers["Cache-Control"] = NO_STORE
    return {**endpoint_json(view), "secret": secret}


@router.get("/webhooks")
async def list_all(rt: RuntimeDep, actor: ActorDep) -> dict[str, Any]:
    """Every endpoint, disabled ones included (endpoints are never deleted)."""
    return {"endpoints": [endpoint_json(v) for v in await endpoints.list_endpoints(rt, actor)]}


@router.get("/webhooks/{endpoint_id}")
async def read(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """One endpoint (without its secret)."""
    return endpoint_json(await endpoints.get_endpoint(rt, actor, endpoint_id))


@router.post("/webhooks/{endpoint_id}")
async def update(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, body: EndpointPatch) -> dict[str, Any]:
    """Change the URL, event types, description or content flag."""
    changes = EndpointChanges(
        url=body.url, description=body.description, event_types=body.event_types, include_content=body.include_content
    )
    return endpoint_json(await endpoints.update_endpoint(rt, actor, endpoint_id, changes))


@router.post("/webhooks/{endpoint_id}/disable")
async def disable(
    rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, body: DisableIn | None = None
) -> dict[str, Any]:
    """Stop deliveries to the endpoint (they wait, and go out if it is enabled again)."""
    reason = body.reason if body else None
    return endpoint_json(await endpoints.set_enabled(rt, actor, endpoint_id, enabled=False, reason=reason))


@router.post("/webhooks/{endpoint_id}/enable")
async def enable(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Resume deliveries to a disabled endpoint."""
    return endpoint_json(await endpoints.set_enabled(rt, actor, endpoint_id, enabled=True))


@router.post("/webhooks/{endpoint_id}/rotate-secret")
async def rotate_secret(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, response: Response) -> dict[str, Any]:
    """A new signing secret, shown only here. The previous one also signs (a second signature in the header)
    until `previous_secret_valid_until`."""
    view, secret, until = await endpoints.rotate_secret(rt, actor, endpoint_id)
    response.headers["Cache-Control"] = NO_STORE
    return {**endpoint_json(view), "secret": secret, "previous_secret_valid_until": _time(until)}


@router.get("/webhooks/{endpoint_id}/deliveries")
async def list_deliveries(
    rt: RuntimeDep,
    actor: ActorDep,
    endpoint_id: EndpointId,
    status: Annotated[Literal["pending", "delivered", "failed"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE), strict_int(minimum=1, maximum=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS, description="The previous page's cursor")] = None,
) -> dict[str, Any]:
    """The endpoint's delivery log, newest first; `cursor` in the answer fetches the next page (null at the end)."""
    before = decode_cursor(cursor).id if cursor is not None else None
    rows = await deliveries.list_deliveries(rt, actor, endpoint_id, status=status, before_id=before, limit=limit + 1)
    page = rows[:limit]
    more = len(rows) > limit
    return {
        "deliveries": [delivery_json(v) for v in page],
        "cursor": encode_cursor(Position(page[-1].created_at, page[-1].id)) if more else None,
    }


@router.get("/webhooks/{endpoint_id}/deliveries/{delivery_id}")
async def read_delivery(
    rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, delivery_id: DeliveryId
) -> dict[str, Any]:
    """One delivery with the exact body that was (or will be) sent."""
    return delivery_json(await deliveries.get_delivery(rt, actor, endpoint_id, delivery_id), payload=True)


@router.post("/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay")
async def replay(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, delivery_id: DeliveryId) -> dict[str, Any]:
    """Send the delivery again now, with the same `webhook-id` and body (receivers de-duplicate by it)."""
    return delivery_json(await deliveries.replay(rt, actor, endpoint_id, delivery_id))


@router.post("/webhooks/{endpoint_id}/replay")
async def replay_failed(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId, body: ReplayIn) -> dict[str, Any]:
    """Send again every failed delivery created since a time; each keeps its `webhook-id`."""
    return {"replayed": await deliveries.replay_failed(rt, actor, endpoint_id, since=body.since)}


@router.post("/webhooks/{endpoint_id}/test", status_code=202)
async def send_test(rt: RuntimeDep, actor: ActorDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Queue a `webhook.test` event to the endpoint."""
    return delivery_json(await deliveries.send_test(rt, actor, endpoint_id), payload=True)


@router.get("/notices")
async def notices(
    rt: RuntimeDep,
    actor: ActorDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE), strict_int(minimum=1, maximum=MAX_PAGE)] = 50,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="The previous page's `next_before`"), STRICT_ID
    ] = None,
) -> dict[str, Any]:
    """Notices for admins (an endpoint the service disabled, ...), newest first."""
    rows = await deliveries.list_notices(rt, actor, before_id=before, limit=limit + 1)
    page = rows[:limit]
    return {
        "notices": [
            {
                "id": n.id,
                "created_at": _time(n.created_at),
                "kind": n.kind,
                "text": stored(n.text),
                "details": n.details,
            }
            for n in page
        ],
        "next_before": page[-1].id if len(rows) > limit else None,
    }
