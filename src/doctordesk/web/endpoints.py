"""The PATCH endpoints of this app, read from its API description: what a real-time message may name."""

from __future__ import annotations

from fastapi import FastAPI

from doctordesk.realtime.message import EndpointMatcher


def patch_templates(app: FastAPI) -> list[str]:
    """The path templates of every PATCH operation, e.g. ``/profile/appointments/{appointment_id}/approve``."""
    paths: dict[str, dict[str, object]] = app.openapi().get("paths", {})
    return sorted(path for path, operations in paths.items() if "patch" in operations)


def patch_endpoint_matcher(app: FastAPI) -> EndpointMatcher:
    """A predicate: is this path a PATCH endpoint of the app (the parser's ``is_endpoint``)."""
    return EndpointMatcher(patch_templates(app))
