"""The bench-only app: the real service plus a bare endpoint returning ``{}``, so both are measured in one process
with the same middleware and server settings. Never used by the product."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from doctordesk.app import Service
from doctordesk.app import create_app as create_service
from doctordesk.web import route_table

BARE_PATH = "/api/bench-bare"


def create_app() -> Service:
    app = create_service()
    bare = APIRouter()

    @bare.patch(BARE_PATH)
    async def bare_endpoint() -> dict[str, Any]:
        """Nothing at all: the framework's floor."""
        return {}

    # Added and indexed as the service's own routes are (``web/route_table.py``), after them all.
    route_table.add_routes(app, bare)
    app.index_routes()
    return app
