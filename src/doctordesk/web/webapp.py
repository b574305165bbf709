"""The web app's static files at ``/``, kept out of the API's way.

A mount at ``/`` matches every path, so without care it would answer a wrong method on an API path (``GET
/auth/login``) with its own 404 instead of the router's 405. Paths under the API prefixes never reach it.
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import Match, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

API_PREFIXES = ("/api/", "/profile/", "/auth/", "/metrics", "/healthz", "/readyz", "/openapi.json", "/docs", "/redoc")


class WebAppMount(Mount):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope.get("type") == "http" and (path + "/").startswith(API_PREFIXES):
            return Match.NONE, {}
        return super().matches(scope)


def web_app_mount(directory: Path) -> WebAppMount:
    return WebAppMount("/", app=StaticFiles(directory=directory, html=True), name="web")
