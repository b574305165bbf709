"""The web app's static files at ``/``, kept out of the API's way.

A mount at ``/`` matches every path, so without care it would answer a wrong method on an API path (``GET
/auth/login``) with its own 404 instead of the router's 405. Paths under the API prefixes never reach it.

The app is plain ES modules with no build step, so their URLs carry no version. Every file is served with
``Cache-Control: no-cache``: a browser keeps its copy but asks again each time (a 304 thanks to the ETag), and never
runs modules of two releases together after an update.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.responses import Response
from starlette.routing import Match, Mount
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import Scope

API_PREFIXES = (
    "/api/",
    "/admin/",
    "/integration/",
    "/profile/",
    "/auth/",
    "/oauth/",
    "/smart/",
    "/calendar/",
    "/metrics",
    "/healthz",
    "/readyz",
    "/openapi.json",
    "/docs",
    "/redoc",
)


class WebAppMount(Mount):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope.get("type") == "http" and (path + "/").startswith(API_PREFIXES):
            return Match.NONE, {}
        return super().matches(scope)


class WebAppFiles(StaticFiles):
    def file_response(
        self, full_path: PathLike, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = "no-cache"
        return response


def web_app_mount(directory: Path) -> WebAppMount:
    return WebAppMount("/", app=WebAppFiles(directory=directory, html=True), name="web")
