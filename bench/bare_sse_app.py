"""A separate minimal app for the stream benchmarks' floor: FastAPI with one plain keep-alive SSE endpoint (the
same opening frames as the service's stream, then a heartbeat every 25 s until the client goes away), no
middleware, no authentication, no presence. Served by ``bench.common.Server`` under the same uvicorn settings as
the service. Never used by the product."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.responses import StreamingResponse

BARE_SSE_PATH = "/bare-sse"
HEARTBEAT_SECONDS = 25.0


def create_app() -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    ids = itertools.count(1)

    async def frames() -> AsyncIterator[bytes]:
        yield f"retry: 3000\nid: {int(time.time() * 1000)}-{next(ids)}\ndata: \n\n".encode()
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            yield f"id: {int(time.time() * 1000)}-{next(ids)}\ndata: \n\n".encode()

    @app.get(BARE_SSE_PATH)
    async def bare_sse() -> StreamingResponse:
        return StreamingResponse(
            frames(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "Connection": "keep-alive"}
        )

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {}

    return app
