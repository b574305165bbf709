"""OpenAPI descriptions shared by the routes: the one error body and the error responses of each kind of route."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

from doctordesk.domain.scheduling.suggestions import HH_MM_PATTERN
from doctordesk.web.bodies import describe_text


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


# Any error, described generally (for a status the specific ones below do not cover).
ERROR = error_doc("Error body (docs/protocol.md#errors)")
UNAUTHORIZED = error_doc("UNAUTHORIZED: missing, unknown, expired or revoked access token")
FORBIDDEN = error_doc("FORBIDDEN (or DOCTOR_COMMUNITY_CHAT_DISABLED): not allowed")
NOT_FOUND = error_doc("NOT_FOUND: unknown, or not yours")
CONFLICT = error_doc("APPOINTMENT_CHANGED (reload) or INVALID_TRANSITION")
TOO_LARGE = error_doc("PAYLOAD_TOO_LARGE: body or upload over its limit")
INVALID = error_doc("FIELDS_VALIDATION_ERROR (or a policy code): input missing or invalid, per-field messages")
THROTTLED = error_doc("TOO_MANY_REQUESTS: rate limited (Retry-After)")

# Screens (PUT, PATCH) and the read API.
SCREEN_RESPONSES: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 404: NOT_FOUND, 422: INVALID}
# Reads of one role's data (the administration API): the other roles get 403.
ROLE_READ_RESPONSES: dict[int | str, dict[str, Any]] = {**SCREEN_RESPONSES, 403: FORBIDDEN}
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


def install_openapi(app: FastAPI) -> None:
    """Describe errors as the service really answers them: the framework's automatic 422 with our error body, a 401
    on every route behind the bearer token, and errors as JSON even where the success is a stream or a file."""
    default = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = default()
        error_ref = "#/components/schemas/ErrorBody"
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        if "ErrorBody" not in schemas:
            schemas["ErrorBody"] = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                if operation.get("security") and "401" not in operation.get("responses", {}):
                    # Every route behind the bearer token can answer 401.
                    operation.setdefault("responses", {})["401"] = {
                        "description": UNAUTHORIZED["description"],
                        "content": {"application/json": {"schema": {"$ref": error_ref}}},
                    }
                for status, response in operation.get("responses", {}).items():
                    if not str(status).startswith("4"):
                        continue
                    refs = [c.get("schema", {}).get("$ref", "") for c in response.get("content", {}).values()]
                    if any(r.endswith(("/HTTPValidationError", "/ErrorBody")) for r in refs):
                        # Errors are JSON even where the success is a stream or a file.
                        response["content"] = {"application/json": {"schema": {"$ref": error_ref}}}
                        if any(r.endswith("/HTTPValidationError") for r in refs):
                            response["description"] = INVALID["description"]
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


# --- form bodies read by hand (web/deps.py's FormDep): described here so clients and tests know them ---

ID_FIELD: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 2**53}
VERSION_FIELD: dict[str, Any] = {
    "type": "integer",
    "minimum": 0,
    "maximum": 2**31 - 1,
    "description": "The version shown on the page (ASCII digits)",
}
FLAG_FIELD: dict[str, Any] = {"type": "string", "enum": ["true", "false"]}


def card_fields(*, alternatives: int = 3, as_typed: bool = False) -> dict[str, Any]:
    """``profile~n``, ``location~n``, ``date~n``, ``time~n`` for n = 1..alternatives. ``as_typed``: the fields
    of a card being edited, stored as typed and judged on the card (any text up to 64 characters)."""
    fields: dict[str, Any] = {}
    if as_typed:
        typed = {"type": "string", "maxLength": 64, "description": "As typed; judged on the card"}
        return {
            f"{name}~{n}": typed for n in range(1, alternatives + 1) for name in ("profile", "location", "date", "time")
        }
    for n in range(1, alternatives + 1):
        fields[f"profile~{n}"] = {**ID_FIELD, "description": f"Doctor of alternative {n}"}
        fields[f"location~{n}"] = {**ID_FIELD, "description": f"Location of alternative {n}"}
        fields[f"date~{n}"] = {"type": "string", "format": "date", "description": "YYYY-MM-DD"}
        fields[f"time~{n}"] = {"type": "string", "pattern": HH_MM_PATTERN, "description": "HH:MM"}
    return fields


def form_body(
    properties: dict[str, Any],
    *,
    required: tuple[str, ...] = (),
    multiline: tuple[str, ...] = (),
    **keywords: Any,
) -> dict[str, Any]:
    """An ``openapi_extra`` describing an ``application/x-www-form-urlencoded`` body; its text fields follow the
    free-text rule (``multiline``: the fields that may hold line breaks). ``keywords`` are further JSON Schema
    keywords of the form (``patternProperties`` for numbered fields, ``anyOf`` for "at least one of")."""
    properties = {name: dict(field) for name, field in properties.items()}
    for name, field in properties.items():
        describe_text(field, multiline=name in multiline)
    schema: dict[str, Any] = {"type": "object", "properties": properties, **keywords}
    if required:
        schema["required"] = list(required)
    return {
        "requestBody": {
            "required": bool(required),
            "content": {"application/x-www-form-urlencoded": {"schema": schema}},
        }
    }
