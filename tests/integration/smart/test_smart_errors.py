"""Every refusal of the authorization and token endpoints, in OAuth 2's shape: unknown client, wrong redirect URI,
a scope the app may not have, no or bad PKCE, an expired code, a code used twice (which also revokes what the first
use got), a rotated refresh token used again (which ends the grant)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx

from doctordesk.domain.clock import FixedClock
from tests.integration.smart.conftest import REDIRECT, App, authorize_query, exchange, query_of

SCOPE = "launch/patient patient/Appointment.rs offline_access"


async def test_unknown_client_and_unregistered_redirect_uri_are_answered_here_not_redirected(
    client: httpx.AsyncClient, register: Callable[..., Any]
) -> None:
    app = await register(scopes=["patient/Appointment.rs"])
    unknown = await client.get("/oauth/authorize", params=authorize_query(App("smart_nobody", None, 0), SCOPE))
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_client"
    elsewhere = await client.get(
        "/oauth/authorize",
        params=authorize_query(app, "patient/Appointment.rs", redirect_uri="https://evil.example/cb"),
    )
    assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "invalid_request"
    assert "location" not in elsewhere.headers


async def test_scope_not_allowed_and_missing_pkce_go_back_to_the_app(
    client: httpx.AsyncClient, register: Callable[..., Any]
) -> None:
    app = await register(scopes=["patient/Appointment.rs"])
    wider = await client.get("/oauth/authorize", params=authorize_query(app, "user/Appointment.cruds"))
    assert wider.status_code == 302
    back = query_of(wider.headers["location"])
    assert wider.headers["location"].startswith(REDIRECT)
    assert back["error"] == "invalid_scope" and back["state"] == "st-1"
    plain = await client.get(
        "/oauth/authorize", params=authorize_query(app, "patient/Appointment.rs", code_challenge_method="plain")
    )
    assert query_of(plain.headers["location"])["error"] == "invalid_request"
    without = await client.get(
        "/oauth/authorize", params=authorize_query(app, "patient/Appointment.rs", code_challenge="")
    )
    assert query_of(without.headers["location"])["error"] == "invalid_request"


async def test_bad_pkce_verifier_and_wrong_redirect_uri_are_invalid_grant(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    app = await register(scopes=SCOPE.split())
    code = await launch(app, SCOPE)
    bad = await exchange(client, app, code, code_verifier="w" * 43)
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"
    assert bad.headers["cache-control"] == "no-store"
    moved = await exchange(client, app, code, redirect_uri="https://app.example.org/other")
    assert moved.json()["error"] == "invalid_grant"
    ok = await exchange(client, app, code)  # refused attempts do not spend the code
    assert ok.status_code == 200, ok.text


async def test_unknown_client_and_wrong_secret_are_invalid_client(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    app = await register(scopes=SCOPE.split(), kind="confidential")
    code = await launch(app, SCOPE)
    nobody = await exchange(client, App("smart_nobody", None, 0), code)
    assert nobody.status_code == 400 and nobody.json()["error"] == "invalid_client"
    wrong = await client.post(
        "/oauth/token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": "x" * 43},
        auth=(app.client_id, "ddcs_wrong"),
    )
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    assert wrong.headers["www-authenticate"].startswith("Basic")
    right = await exchange(client, app, code, client_secret=app.secret or "")
    assert right.status_code == 200, right.text


async def test_an_expired_code_is_refused(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], clock: FixedClock
) -> None:
    app = await register(scopes=SCOPE.split())
    code = await launch(app, SCOPE)
    clock.advance(timedelta(seconds=61))
    late = await exchange(client, app, code)
    assert late.status_code == 400 and late.json() == {
        "error": "invalid_grant",
        "error_description": "The code has expired.",
    }


async def test_a_code_used_twice_is_refused_and_revokes_the_first_tokens(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    app = await register(scopes=SCOPE.split())
    code = await launch(app, SCOPE)
    first = (await exchange(client, app, code)).json()
    headers = {"Authorization": f"Bearer {first['access_token']}"}
    assert (await client.get("/fhir/Appointment", headers=headers)).status_code == 200
    again = await exchange(client, app, code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert (await client.get("/fhir/Appointment", headers=headers)).status_code == 401


async def test_a_rotated_refresh_token_used_again_ends_the_grant(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    app = await register(scopes=SCOPE.split())
    first = (await exchange(client, app, await launch(app, SCOPE))).json()
    refresh = {"grant_type": "refresh_token", "client_id": app.client_id}
    second = await client.post("/oauth/token", data={**refresh, "refresh_token": first["refresh_token"]})
    assert second.status_code == 200 and second.json()["refresh_token"] != first["refresh_token"]
    reused = await client.post("/oauth/token", data={**refresh, "refresh_token": first["refresh_token"]})
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    newest = second.json()
    assert (await client.post("/oauth/token", data={**refresh, "refresh_token": newest["refresh_token"]})).json()[
        "error"
    ] == "invalid_grant"
    headers = {"Authorization": f"Bearer {newest['access_token']}"}
    assert (await client.get("/fhir/Appointment", headers=headers)).status_code == 401


async def test_an_unknown_grant_type_is_unsupported(client: httpx.AsyncClient) -> None:
    answer = await client.post("/oauth/token", data={"grant_type": "password", "client_id": "x"})
    assert answer.status_code == 400 and answer.json()["error"] == "unsupported_grant_type"


async def test_a_deactivated_users_tokens_and_refresh_are_refused(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], login: Callable[[str], Any]
) -> None:
    app = await register(scopes=SCOPE.split())
    token = (await exchange(client, app, await launch(app, SCOPE))).json()
    admin = await login("admin")
    users = (await client.get("/admin/users", headers=admin.headers)).json()["users"]
    [patient1] = [u["id"] for u in users if u["username"] == "patient1"]
    assert (await client.post(f"/admin/users/{patient1}/deactivate", headers=admin.headers)).status_code == 200
    bearer = {"Authorization": f"Bearer {token['access_token']}"}
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 401
    refresh = {"grant_type": "refresh_token", "client_id": app.client_id, "refresh_token": token["refresh_token"]}
    refused = await client.post("/oauth/token", data=refresh)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
