"""The consent page and the SMART apps screen in-process: a denial goes back as ``access_denied``; a ticket is
answered once and expires; the admin screen registers an app (secret on the answer only) and deactivating it
refuses its tokens at once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx

from doctordesk.domain.clock import FixedClock
from tests.integration.smart.conftest import App, authorize_query, exchange, query_of

SCOPE = "launch/patient patient/Appointment.rs"


async def _ticket(client: httpx.AsyncClient, app: Any) -> str:
    started = await client.get("/oauth/authorize", params=authorize_query(app, SCOPE))
    assert started.status_code == 303 and started.headers["location"].startswith("/#/profile/smart/authorize/")
    return str(started.headers["location"].rsplit("/", 1)[1])


async def test_deny_goes_back_as_access_denied_and_a_ticket_is_answered_once(
    client: httpx.AsyncClient, register: Callable[..., Any], login: Callable[[str], Any]
) -> None:
    app = await register(scopes=SCOPE.split())
    ticket = await _ticket(client, app)
    patient = await login("patient1")
    assert (await client.put(f"/profile/smart/authorize/{ticket}")).status_code == 401  # signed in first
    page = (await client.put(f"/profile/smart/authorize/{ticket}", headers=patient.headers)).json()
    assert page["title"] == "Allow Patient portal?"
    denied = await client.post(f"/profile/smart/authorize/{ticket}/deny", headers=patient.headers)
    assert query_of(denied.json()["leave"]) == {
        "error": "access_denied",
        "error_description": "The user denied the request.",
        "state": "st-1",
    }
    again = await client.post(f"/profile/smart/authorize/{ticket}/allow", headers=patient.headers)
    assert again.status_code == 404


async def test_a_ticket_expires_after_ten_minutes(
    client: httpx.AsyncClient, register: Callable[..., Any], login: Callable[[str], Any], clock: FixedClock
) -> None:
    app = await register(scopes=SCOPE.split())
    ticket = await _ticket(client, app)
    clock.advance(timedelta(minutes=10))
    patient = await login("patient1")
    assert (await client.put(f"/profile/smart/authorize/{ticket}", headers=patient.headers)).status_code == 404


async def test_the_admin_screen_registers_an_app_and_deactivating_it_refuses_its_tokens(
    client: httpx.AsyncClient, login: Callable[[str], Any], launch: Callable[..., Any]
) -> None:
    admin = await login("admin")
    form = {
        "name": "Screen app",
        "kind": "confidential",
        "redirect_uris": "https://app.example.org/callback",
        "allowed_scopes": SCOPE,
    }
    created = await client.post("/profile/admin/smart-apps/create", headers=admin.headers, data=form)
    assert created.status_code == 200, created.text
    shown = [p["set"]["value"] for p in created.json()["patches"] if p.get("id") == "created"]
    assert "Client secret: ddcs_" in shown[0]
    page = (await client.put("/profile/admin/smart-apps", headers=admin.headers)).text
    assert "ddcs_" not in page and "Screen app" in page
    listed = (await client.get("/admin/smart-apps", headers=admin.headers)).json()["smart_apps"][0]
    secret = shown[0].split("Client secret: ")[1].split(" ")[0]

    app = App(listed["client_id"], secret, listed["id"])
    token = (await exchange(client, app, await launch(app, SCOPE), client_secret=secret)).json()
    bearer = {"Authorization": f"Bearer {token['access_token']}"}
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 200
    off = await client.post(f"/profile/admin/smart-apps/{app.pk}/deactivate", headers=admin.headers)
    assert off.status_code == 200
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 401
    doctor = await login("doctor1")
    assert (await client.put("/profile/admin/smart-apps", headers=doctor.headers)).status_code == 404


async def test_the_consent_page_and_the_smart_apps_screen_are_german(
    client: httpx.AsyncClient, register: Callable[..., Any], login: Callable[[str], Any], runtime: Any
) -> None:
    from tests.integration.web.test_german_screens import assert_german

    app = await register(scopes=["openid", "fhirUser", "offline_access", *SCOPE.split(), "user/*.cruds"])
    wide = authorize_query(app, f"openid fhirUser offline_access {SCOPE} user/*.cruds")
    ticket = (await client.get("/oauth/authorize", params=wide)).headers["location"].rsplit("/", 1)[1]
    doctor, admin = await login("doctor1"), await login("admin")
    await assert_german(client, doctor.headers, [f"/profile/smart/authorize/{ticket}"], runtime)
    await assert_german(client, admin.headers, ["/profile/admin/smart-apps"], runtime)


async def test_allowing_an_app_needs_a_recent_sign_in(
    client: httpx.AsyncClient, register: Callable[..., Any], login: Callable[[str], Any], clock: FixedClock
) -> None:
    """A grant is a lasting way in (refresh tokens live 30 days): a stale session re-authenticates first."""
    app = await register(scopes=SCOPE.split())
    patient = await login("patient1")
    clock.advance(timedelta(seconds=601))
    ticket = await _ticket(client, app)
    refused = await client.post(f"/profile/smart/authorize/{ticket}/allow", headers=patient.headers)
    assert refused.status_code == 403 and refused.json()["code"] == "REAUTHENTICATION_REQUIRED"
    proved = await client.post("/auth/reauthenticate", data={"password": "demo"}, headers=patient.headers)
    assert proved.status_code == 204, proved.text
    allowed = await client.post(f"/profile/smart/authorize/{ticket}/allow", headers=patient.headers)
    assert allowed.status_code == 200 and "code" in query_of(allowed.json()["leave"])
