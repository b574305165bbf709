"""OpenAPI descriptions shared by the screen routes."""

from __future__ import annotations

from typing import Any

ERROR = {"description": "Error body (docs/protocol.md#errors)"}
SCREEN_RESPONSES: dict[int | str, dict[str, Any]] = {401: ERROR, 404: ERROR, 422: ERROR}
SUBMIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: ERROR,
    403: ERROR,
    404: ERROR,
    409: ERROR,
    413: ERROR,
    422: ERROR,
    429: ERROR,
}
