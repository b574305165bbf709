"""OpenAPI descriptions shared by the routes: the one error body and the error responses of each kind of route."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ErrorBody(BaseModel):
    """The one error shape of every 4xx (docs/protocol.md#errors)."""

    kind: str = Field("error", description="Always 'error'")
    code: str = Field(description="Stable code: FIELDS_VALIDATION_ERROR, NOT_FOUND, APPOINTMENT_CHANGED, ...")
    message: str = Field(description="A human-readable message")
    status: int = Field(description="The HTTP status, repeated")
    fields: dict[str, str] = Field(default_factory=dict, description="Messages keyed by form field name")
    reload: bool | None = Field(None, description="Present and true on APPOINTMENT_CHANGED: reload the screen")


def error_doc(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


UNAUTHORIZED = error_doc("UNAUTHORIZED: missing, unknown, expired or revoked access token")
FORBIDDEN = error_doc("FORBIDDEN (or DOCTOR_COMMUNITY_CHAT_DISABLED): not allowed")
NOT_FOUND = error_doc("NOT_FOUND: unknown, or not yours")
CONFLICT = error_doc("APPOINTMENT_CHANGED (reload) or INVALID_TRANSITION")
TOO_LARGE = error_doc("PAYLOAD_TOO_LARGE: body or upload over its limit")
INVALID = error_doc("FIELDS_VALIDATION_ERROR (or a policy code): input missing or invalid, per-field messages")
THROTTLED = error_doc("TOO_MANY_REQUESTS: rate limited (Retry-After)")

# Screens (PUT, PATCH) and the read API.
SCREEN_RESPONSES: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 404: NOT_FOUND, 422: INVALID}
# Submissions (POST, and PATCH with a form).
SUBMIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: UNAUTHORIZED,
    403: FORBIDDEN,
    404: NOT_FOUND,
    409: CONFLICT,
    413: TOO_LARGE,
    422: INVALID,
    429: THROTTLED,
}
