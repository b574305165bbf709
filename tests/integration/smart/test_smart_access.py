"""What a SMART token may do at the FHIR interface: its scopes are a ceiling over the user's own rights; a staff
user's patient launch sees only the patient picked; the discovery document, the CapabilityStatement's security,
the id token and the admin's registration (validated, audited, secret shown once and hashed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from joserfc import jwt
from joserfc.jwk import KeySet
from sqlalchemy import select

from doctordesk.runtime import Runtime
from doctordesk.store.smart_tables import SmartClient
from doctordesk.store.tables import AuditLog
from tests.integration.smart.conftest import REDIRECT, authorize_query, exchange


async def _token(client: httpx.AsyncClient, app: Any, code: str) -> dict[str, Any]:
    answer = await exchange(client, app, code)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _bearer(token: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {token['access_token']}"}


def _patients_of(bundle: dict[str, Any]) -> set[str]:
    return {e["resource"]["participant"][0]["actor"]["reference"] for e in bundle.get("entry", [])}


async def test_a_staff_launch_sees_only_the_picked_patient_and_a_user_scope_sees_the_rest(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], login: Callable[[str], Any]
) -> None:
    scopes = ["launch/patient", "patient/Appointment.rs", "user/Patient.rs"]
    app = await register(scopes=scopes)
    doctor = await login("doctor1")
    own = (await client.get("/fhir/Appointment?_count=200", headers=doctor.headers)).json()
    mine = sorted(_patients_of(own))
    assert len(mine) >= 2  # Dr. Berger has appointments with several patients
    picked = mine[0].split("/")[1]
    # Without a pick the consent is refused, naming the field.
    started = await client.get("/oauth/authorize", params=authorize_query(app, " ".join(scopes)))
    ticket = started.headers["location"].rsplit("/", 1)[1]
    refused = await client.post(f"/profile/smart/authorize/{ticket}/allow", headers=doctor.headers)
    assert refused.status_code == 422 and "patient" in refused.json()["fields"]
    token = await _token(client, app, await launch(app, " ".join(scopes), "doctor1", patient=picked))
    assert token["patient"] == picked
    seen = (await client.get("/fhir/Appointment?_count=200", headers=_bearer(token))).json()
    assert _patients_of(seen) == {f"Patient/{picked}"}
    # user/Patient.rs: the patients the doctor may see, not only the launch's.
    patients = (await client.get("/fhir/Patient?_count=200", headers=_bearer(token))).json()
    assert len(patients["entry"]) == len(mine)
    # No scope for Slot at all: 403.
    assert (await client.get("/fhir/Slot?schedule=Schedule/1-1", headers=_bearer(token))).status_code == 403


async def test_a_patient_token_reads_its_own_and_cannot_create(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    app = await register(scopes=["launch/patient", "patient/Appointment.rs"])
    token = await _token(client, app, await launch(app, "launch/patient patient/Appointment.rs"))
    seen = (await client.get("/fhir/Appointment", headers=_bearer(token))).json()
    assert _patients_of(seen) == {f"Patient/{token['patient']}"}
    body = {"resourceType": "Appointment", "status": "proposed"}
    made = await client.post(
        "/fhir/Appointment", headers={**_bearer(token), "Content-Type": "application/fhir+json"}, json=body
    )
    assert made.status_code == 403 and made.json()["resourceType"] == "OperationOutcome"
    # A SMART token is for the FHIR interface only.
    assert (await client.put("/profile/appointments", headers=_bearer(token))).status_code == 401


async def test_discovery_and_capability_name_the_oauth_endpoints(client: httpx.AsyncClient) -> None:
    config = (await client.get("/fhir/.well-known/smart-configuration")).json()
    assert config["code_challenge_methods_supported"] == ["S256"]
    assert {"launch-standalone", "client-public", "client-confidential-symmetric", "context-standalone-patient",
            "permission-patient", "permission-user", "permission-v2"} <= set(config["capabilities"])  # fmt: skip
    assert config["token_endpoint"] == "http://testserver/oauth/token"
    security = (await client.get("/fhir/metadata")).json()["rest"][0]["security"]
    assert security["service"][0]["coding"][0]["code"] == "SMART-on-FHIR"
    uris = {e["url"]: e["valueUri"] for e in security["extension"][0]["extension"]}
    assert uris["authorize"] == config["authorization_endpoint"] and uris["token"] == config["token_endpoint"]


async def test_openid_gives_a_signed_id_token_naming_the_patient(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    scope = "openid fhirUser launch/patient patient/Appointment.rs"
    app = await register(scopes=scope.split())
    token = await _token(client, app, await launch(app, scope))
    keys = KeySet.import_key_set((await client.get("/oauth/jwks")).json())
    claims = jwt.decode(token["id_token"], keys).claims
    assert claims["aud"] == app.client_id and claims["iss"] == "http://testserver"
    assert claims["fhirUser"] == f"http://testserver/fhir/Patient/{token['patient']}"


async def test_registration_is_checked_audited_and_keeps_only_a_hash(
    client: httpx.AsyncClient, register: Callable[..., Any], login: Callable[[str], Any], runtime: Runtime
) -> None:
    admin = await login("admin")
    bad = {"name": "X", "kind": "public", "redirect_uris": ["http://app.example.org/cb"], "allowed_scopes": ["root"]}
    refused = await client.post("/admin/smart-apps", headers=admin.headers, json=bad)
    assert refused.status_code == 422 and {"redirect_uris", "allowed_scopes"} <= set(refused.json()["fields"])
    doctor = await login("doctor1")
    assert (await client.get("/admin/smart-apps", headers=doctor.headers)).status_code == 403
    app = await register(scopes=["patient/Appointment.rs"], kind="confidential")
    assert app.secret and app.secret.startswith("ddcs_")
    listed = (await client.get("/admin/smart-apps", headers=admin.headers)).json()["smart_apps"]
    assert [a["redirect_uris"] for a in listed] == [[REDIRECT]] and "client_secret" not in listed[0]
    async with runtime.db.read() as session:
        stored = await session.scalar(select(SmartClient.secret_hash))
        actions = (await session.scalars(select(AuditLog.action).where(AuditLog.entity == "smart_client"))).all()
    assert stored is not None and stored.startswith("sha256$") and app.secret not in stored
    assert "smart-client.register" in actions
