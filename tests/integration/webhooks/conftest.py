"""Webhook tests: deliveries driven round by round (no dispatcher in the app unless a test starts one), loopback
endpoints allowed, a receiver on loopback, and the admin's registration call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from doctordesk.config import Settings


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url, webhook_in_process=False, webhook_allow_private_addresses=True)


@pytest.fixture
async def admin(login: Callable[[str], Any]) -> Any:
    return await login("admin")


@pytest.fixture
def register(client: httpx.AsyncClient, admin: Any) -> Callable[..., Any]:
    """``await register(url, ["appointment.approved"], include_content=False)`` → the created endpoint (with its
    secret)."""

    async def do(url: str, event_types: list[str], **extra: Any) -> dict[str, Any]:
        response = await client.post(
            "/admin/webhooks", json={"url": url, "event_types": event_types, **extra}, headers=admin.headers
        )
        assert response.status_code == 201, response.text
        assert response.headers["cache-control"] == "no-store"  # it carries the secret
        body: dict[str, Any] = response.json()
        return body

    return do
