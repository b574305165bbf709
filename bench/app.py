"""The bench-only app: the real service plus a bare endpoint returning ``{}``, so both are measured in one process
with the same middleware and server settings. Never used by the product."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI

from doctordesk.app import create_app as create_service

BARE_PATH = "/api/bench-bare"


def create_app() -> FastAPI:
    app = create_service()
    bare = APIRouter()

    @bare.patch(BARE_PATH)
    async def bare_endpoint() -> dict[str, Any]:
        """Nothing at all: the framework's floor."""
        return {}

    app.include_router(bare)
    return app
