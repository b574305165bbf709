"""The PATCH endpoints of this app, read from its API description: what a real-time message may name."""

from __future__ import annotations

from fastapi import FastAPI

from doctordesk.realtime.message import EndpointMatcher


def patch_templates(app: FastAPI) -> list[str]:
    """The path templates of every screen PATCH operation, e.g. ``/profile/appointments/{appointment_id}/approve``
    (the JSON API under ``/api/`` has PATCH routes too, but those are no screens to refresh)."""
    paths: dict[str, dict[str, object]] = app.openapi().get("paths", {})
    return sorted(path for path, operations in paths.items() if "patch" in operations and not path.startswith("/api/"))


def patch_endpoint_matcher(app: FastAPI) -> EndpointMatcher:
    """A predicate: is this path a PATCH endpoint of the app (the parser's ``is_endpoint``)."""
    return EndpointMatcher(patch_templates(app))
