"""Operations: liveness, readiness (the database and Redis answer within a timeout) and Prometheus metrics."""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from doctordesk.domain.errors import Forbidden, Unauthorized
from doctordesk.domain.texts import N_
from doctordesk.realtime import outbox
from doctordesk.realtime.shared import SharedBus
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.web.deps import RuntimeDep, bearer
from doctordesk.web.responses import error_doc

router = APIRouter(tags=["operations"])

# Readiness waits this long for each answer (the database's query, Redis's PING): a frozen server is not ready.
READY_TIMEOUT = 1.0


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "The database does not answer"}})
async def readyz(rt: RuntimeDep) -> JSONResponse:
    """Readiness: the database answers a query within a second (503 otherwise). ``bus`` is ``redis-connected``
    only when Redis answers a PING within a second (``socket-connected``: the broker of ``serve --workers N``);
    without it the instance stays ready (its clients poll). ``instance`` names the process that answered."""
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            await outbox.ping(rt.db)
    except Exception as exc:  # any failure to reach the database in time means "not ready"
        return JSONResponse({"status": "unavailable", "database": type(exc).__name__}, status_code=503)
    bus = rt.bus
    state = "memory"
    if isinstance(bus, SharedBus):
        connected = await bus.ping(timeout=READY_TIMEOUT)
        state = f"{bus.kind}-connected" if connected else f"{bus.kind}-disconnected"
    return JSONResponse({"status": "ok", "database": "ok", "bus": state, "instance": rt.hub.instance})


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}},
        401: error_doc("UNAUTHORIZED: DOCTORDESK_METRICS_TOKEN is set and the request does not carry it"),
        403: error_doc("FORBIDDEN: no metrics token is set and the client is not on this host"),
    },
    # The token is asked for only when DOCTORDESK_METRICS_TOKEN is set: security is optional here.
    openapi_extra={"security": [{}]},
)
async def metrics(
    request: Request, rt: RuntimeDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Response:
    """Prometheus metrics of this instance. With ``DOCTORDESK_METRICS_TOKEN`` set, scrapers send it as a bearer
    token; without it, only clients on this host (loopback) are answered."""
    expected = rt.settings.metrics_token
    if expected:
        given = credentials.credentials if credentials and credentials.scheme.lower() == "bearer" else ""
        if not secrets.compare_digest(given.encode(), expected.encode()):
            raise Unauthorized()
    elif _proxied(request) or not is_loopback(request.client.host if request.client else None):
        raise Forbidden(
            N_("Metrics are served to this host only; set DOCTORDESK_METRICS_TOKEN to scrape from elsewhere.")
        )
    try:
        rt.metrics.outbox_depth.set(await outbox.depth(rt.db))
        rt.metrics.webhook_depth.set(await webhook_outbox.depth(rt.db))
    except Exception:  # metrics stay available while the database is down
        rt.metrics.outbox_depth.set(-1)
        rt.metrics.webhook_depth.set(-1)
    return Response(generate_latest(rt.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def is_loopback(host: str | None) -> bool:
    """Whether the client is on this host: a loopback address (IPv4-mapped too). Anything else, and no address at
    all (a unix socket, where a proxy would make every client look local), is not."""
    try:
        ip = ipaddress.ip_address(host or "")
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _proxied(request: Request) -> bool:
    """The request came through a proxy (a client of the proxy may be anywhere, whatever address it forwards)."""
    return "x-forwarded-for" in request.headers or "forwarded" in request.headers
