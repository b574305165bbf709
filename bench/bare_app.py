"""A separate minimal app for the benchmarks' floor: FastAPI with one ``PATCH`` returning ``{}``, no middleware,
served by ``bench.common.Server`` under the same uvicorn settings as the service. Never used by the product."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from bench.app import BARE_PATH


def create_app() -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.patch(BARE_PATH)
    async def bare_endpoint() -> dict[str, Any]:
        return {}

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {}

    return app
