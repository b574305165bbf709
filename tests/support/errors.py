"""Checking an error answer: the status, and the documented error shape with its code (docs/protocol.md#errors)."""

from __future__ import annotations

from typing import Any


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["kind"] == "error" and body["code"] == code and body["status"] == status
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["fields"], dict)
    assert "Traceback" not in response.text
    return body
