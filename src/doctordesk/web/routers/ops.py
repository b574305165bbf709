"""Operations: liveness, readiness (the database answers) and Prometheus metrics."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from doctordesk.domain.errors import Unauthorized
from doctordesk.realtime import outbox, webhook_outbox
from doctordesk.web.deps import RuntimeDep, bearer

router = APIRouter(tags=["operations"])


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "The database is not reachable"}})
async def readyz(rt: RuntimeDep) -> JSONResponse:
    """Readiness: the database answers a query."""
    try:
        await outbox.ping(rt.db)
    except Exception as exc:  # any failure to reach the database means "not ready"
        return JSONResponse({"status": "unavailable", "database": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "database": "ok", "bus": getattr(rt.bus, "state", "memory")})


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics(
    rt: RuntimeDep, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Response:
    """Prometheus metrics of this instance. With ``DOCTORDESK_METRICS_TOKEN`` set, scrapers send it as a bearer
    token."""
    expected = rt.settings.metrics_token
    if expected and (credentials is None or credentials.credentials != expected):
        raise Unauthorized()
    try:
        rt.metrics.outbox_depth.set(await outbox.depth(rt.db))
        rt.metrics.webhook_depth.set(await webhook_outbox.depth(rt.db))
    except Exception:  # metrics stay available while the database is down
        rt.metrics.outbox_depth.set(-1)
        rt.metrics.webhook_depth.set(-1)
    return Response(generate_latest(rt.metrics.registry), media_type=CONTENT_TYPE_LATEST)
