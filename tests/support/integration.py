"""Helpers for the integration API tests: a service account with a key, made through the admin API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

BOTH = ["appointments:write", "appointments:read"]
# Against the tests' clock (Mon 23 Nov 2026 07:00 UTC, 08:00 in Berlin): Dr. Berger is free then, in her Berlin
# hours (Mon-Fri 08:00-17:00).
FREE_START = "2026-11-26T11:00:00+01:00"


@dataclass
class Key:
    account_id: int
    key_id: int
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


async def make_key(
    client: httpx.AsyncClient,
    admin_headers: dict[str, str],
    *,
    name: str = "booking",
    scopes: list[str] | None = None,
    account_id: int | None = None,
) -> Key:
    if account_id is None:
        created = await client.post("/admin/service-accounts", headers=admin_headers, json={"name": name})
        assert created.status_code == 201, created.text
        account_id = int(created.json()["id"])
    issued = await client.post(
        f"/admin/service-accounts/{account_id}/keys", headers=admin_headers, json={"scopes": scopes or BOTH}
    )
    assert issued.status_code == 201, issued.text
    body = issued.json()
    return Key(account_id, int(body["id"]), str(body["key"]))


def request_body(demo: Any, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "patient": demo.patients["patient1"],
        "doctor": demo.users["doctor1"],
        "location": demo.locations["berlin"],
        "service": "consultation",
        "start": FREE_START,
        "note": "Back pain since Monday",
    }
    body.update(overrides)
    return body
