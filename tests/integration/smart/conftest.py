"""What the SMART tests share: an app registered by the admin, and a launch driven through the authorization
endpoint and the consent screen as a signed-in user."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

FHIR = "http://testserver/fhir"
REDIRECT = "https://app.example.org/callback"
VERIFIER = "v" * 20 + "-0123456789_abcdefghijklmnop"  # 48 characters of the verifier alphabet


@dataclass
class App:
    client_id: str
    secret: str | None
    pk: int


@pytest.fixture
def register(client: httpx.AsyncClient, login: Callable[[str], Any]) -> Callable[..., Any]:
    """``await register(scopes=[...], kind="public")`` → an App registered by the admin."""

    async def do(*, scopes: list[str], kind: str = "public", name: str = "Patient portal") -> App:
        admin = await login("admin")
        body = {"name": name, "kind": kind, "redirect_uris": [REDIRECT], "allowed_scopes": scopes}
        answer = await client.post("/admin/smart-apps", headers=admin.headers, json=body)
        assert answer.status_code == 201, answer.text
        data = answer.json()
        return App(data["client_id"], data["client_secret"], data["id"])

    return do


def authorize_query(app: App, scope: str, **changes: str) -> dict[str, str]:
    query = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": REDIRECT,
        "scope": scope,
        "state": "st-1",
        "aud": FHIR,
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
    }
    query.update(changes)
    return {k: v for k, v in query.items() if v != ""}


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
def launch(client: httpx.AsyncClient, login: Callable[[str], Any]) -> Callable[..., Any]:
    """``await launch(app, scope, user)`` → the code of an allowed launch (``patient``: a staff user's pick)."""

    async def do(app: App, scope: str, user: str = "patient1", patient: str | None = None) -> str:
        started = await client.get("/oauth/authorize", params=authorize_query(app, scope))
        assert started.status_code == 303, started.text
        ticket = started.headers["location"].rsplit("/", 1)[1]
        signed_in = await login(user)
        page = await client.put(f"/profile/smart/authorize/{ticket}", headers=signed_in.headers)
        assert page.status_code == 200, page.text
        form = {"patient": patient} if patient is not None else {}
        answer = await client.post(f"/profile/smart/authorize/{ticket}/allow", headers=signed_in.headers, data=form)
        assert answer.status_code == 200, answer.text
        back = query_of(answer.json()["leave"])
        assert back["state"] == "st-1"
        return back["code"]

    return do


async def exchange(client: httpx.AsyncClient, app: App, code: str, **changes: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": VERIFIER,
        "client_id": app.client_id,
    }
    form.update(changes)
    return await client.post("/oauth/token", data={k: v for k, v in form.items() if v != ""})
