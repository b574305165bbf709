"""EHR launch: a record system (its API key) or an admin asks for a launch value binding an app's launch to one
patient; the app, a real OAuth client (Authlib), sends it with the ``launch`` scope through authorize, consent and
token, and its token carries that patient, whose appointments alone it reads. A used, expired or another app's
launch value, or a launch without its scope, is an OAuth error at the app's redirect URI."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from fastapi import FastAPI
from sqlalchemy import select

from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.store.tables import AuditLog
from tests.integration.smart.conftest import FHIR, REDIRECT, App, authorize_query, query_of
from tests.support.integration import make_key

SCOPE = "launch patient/Appointment.rs openid fhirUser"
TOKEN = "http://testserver/oauth/token"
LAUNCH_URL = "https://app.example.org/launch"


@pytest.fixture
async def ehr_app(client: httpx.AsyncClient, login: Callable[[str], Any]) -> App:
    admin = await login("admin")
    body = {
        "name": "Chart viewer", "kind": "public", "redirect_uris": [REDIRECT], "allowed_scopes": SCOPE.split(),
        "launch_url": LAUNCH_URL,
    }  # fmt: skip
    answer = await client.post("/admin/smart-apps", headers=admin.headers, json=body)
    assert answer.status_code == 201, answer.text
    assert answer.json()["launch_url"] == LAUNCH_URL
    return App(answer.json()["client_id"], None, answer.json()["id"])


async def _patients_of_doctor(client: httpx.AsyncClient, headers: dict[str, str]) -> list[str]:
    bundle = (await client.get("/fhir/Appointment?_count=200", headers=headers)).json()
    return sorted({e["resource"]["participant"][0]["actor"]["reference"] for e in bundle["entry"]})


async def _launch(client: httpx.AsyncClient, headers: dict[str, str], app: App, patient: str) -> httpx.Response:
    return await client.post(
        "/smart/launch", headers=headers, json={"client_id": app.client_id, "patient": int(patient)}
    )


async def test_an_ehr_launch_binds_the_patient_through_authorize_and_token(
    app: FastAPI,
    client: httpx.AsyncClient,
    runtime: Runtime,
    login: Callable[[str], Any],
    ehr_app: App,
) -> None:
    doctor = await login("doctor1")
    patients = await _patients_of_doctor(client, doctor.headers)
    assert len(patients) >= 2
    patient = patients[0].split("/")[1]
    admin = await login("admin")
    key = await make_key(client, admin.headers, name="Records", scopes=["appointments:read"])
    issued = await _launch(client, {"X-Api-Key": key.key}, ehr_app, patient)
    assert issued.status_code == 201, issued.text
    launch = issued.json()
    assert launch["iss"] == FHIR and launch["expires_in"] == 300
    assert query_of(launch["launch_url"]) == {"iss": FHIR, "launch": launch["launch"]}
    oauth = AsyncOAuth2Client(
        ehr_app.client_id, redirect_uri=REDIRECT, scope=SCOPE, code_challenge_method="S256",
        token_endpoint_auth_method="none", transport=httpx.ASGITransport(app=app), base_url="http://testserver",
    )  # fmt: skip
    async with oauth:
        verifier = generate_token(48)
        url, state = oauth.create_authorization_url(
            "http://testserver/oauth/authorize", code_verifier=verifier, aud=FHIR, launch=launch["launch"]
        )
        started = await client.get(url)
        assert started.status_code == 303, started.text
        consent = started.headers["location"].split("#", 1)[1]
        page = (await client.put(consent, headers=doctor.headers)).json()
        assert not [e for e in _all(page["elements"]) if e.get("name") == "patient"]  # the launch named the patient
        allowed = await client.post(f"{consent}/allow", headers=doctor.headers)
        assert allowed.status_code == 200, allowed.text
        token = await oauth.fetch_token(
            TOKEN, authorization_response=allowed.json()["leave"], code_verifier=verifier, state=state
        )
        assert token["patient"] == patient and token["scope"] == SCOPE and token["id_token"]
        assert "encounter" not in token
        seen = (await oauth.get("/fhir/Appointment?_count=200")).json()
    assert {e["resource"]["participant"][0]["actor"]["reference"] for e in seen["entry"]} == {f"Patient/{patient}"}
    async with runtime.db.read() as session:
        audited = await session.scalar(select(AuditLog).where(AuditLog.action == "smart.launch"))
    assert audited is not None and audited.details["patient"] == int(patient)
    assert audited.details["service_account"]["id"] == key.account_id


def _all(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in elements:
        out += [e, *_all(e.get("children", []))]
    return out


async def _authorize(client: httpx.AsyncClient, app: App, scope: str = SCOPE, **changes: str) -> dict[str, str]:
    answer = await client.get("/oauth/authorize", params=authorize_query(app, scope, **changes))
    assert answer.status_code in (302, 303), answer.text
    return query_of(answer.headers["location"]) if answer.status_code == 302 else {"ticket": "yes"}


async def test_used_expired_and_foreign_launch_values_and_a_launch_without_its_scope_are_refused(
    client: httpx.AsyncClient,
    clock: FixedClock,
    login: Callable[[str], Any],
    register: Callable[..., Any],
    ehr_app: App,
) -> None:
    admin = await login("admin")
    patient = (await _patients_of_doctor(client, (await login("doctor1")).headers))[0].split("/")[1]
    value = (await _launch(client, admin.headers, ehr_app, patient)).json()["launch"]
    assert await _authorize(client, ehr_app, launch=value) == {"ticket": "yes"}
    used = await _authorize(client, ehr_app, launch=value)
    assert used["error"] == "invalid_request" and used["state"] == "st-1"
    assert (await _authorize(client, ehr_app, launch="ddln_" + "x" * 43))["error"] == "invalid_request"
    # The launch scope without a launch value, and a launch value without the scope.
    assert (await _authorize(client, ehr_app))["error"] == "invalid_request"
    fresh = (await _launch(client, admin.headers, ehr_app, patient)).json()["launch"]
    without = await _authorize(client, ehr_app, launch=fresh, scope="patient/Appointment.rs")
    assert without["error"] == "invalid_request"
    # Another app's launch value.
    other = await register(scopes=SCOPE.split(), name="Other viewer")
    theirs = (await _launch(client, admin.headers, other, patient)).json()["launch"]
    assert (await _authorize(client, ehr_app, launch=theirs))["error"] == "invalid_request"
    # Five minutes on, a launch value has expired.
    late = (await _launch(client, admin.headers, ehr_app, patient)).json()["launch"]
    clock.advance(timedelta(minutes=5))
    assert (await _authorize(client, ehr_app, launch=late))["error"] == "invalid_request"


async def test_only_admins_and_keys_that_read_every_patient_issue_launch_values(
    client: httpx.AsyncClient, login: Callable[[str], Any], ehr_app: App
) -> None:
    admin = await login("admin")
    patient = (await _patients_of_doctor(client, (await login("doctor1")).headers))[0].split("/")[1]
    for user in ("doctor1", "patient1", "support1"):
        refused = await _launch(client, (await login(user)).headers, ehr_app, patient)
        assert refused.status_code == 403, (user, refused.text)
    writer = await make_key(client, admin.headers, name="Writer", scopes=["appointments:write"])
    assert (await _launch(client, {"X-Api-Key": writer.key}, ehr_app, patient)).status_code == 403
    assert (await client.post("/smart/launch", json={"client_id": ehr_app.client_id, "patient": 1})).status_code == 401
    unknown = await client.post(
        "/smart/launch", headers=admin.headers, json={"client_id": "smart_nobody", "patient": 999999}
    )
    assert unknown.status_code == 422 and set(unknown.json()["fields"]) == {"client_id", "patient"}


async def test_discovery_names_the_ehr_launch(client: httpx.AsyncClient) -> None:
    config = (await client.get("/fhir/.well-known/smart-configuration")).json()
    assert {"launch-ehr", "context-ehr-patient"} <= set(config["capabilities"])
    assert "launch" in config["scopes_supported"]


async def test_a_patient_cannot_allow_a_launch_for_another_patient(
    client: httpx.AsyncClient, login: Callable[[str], Any], ehr_app: App
) -> None:
    admin, patient = await login("admin"), await login("patient1")
    own = (await client.get("/fhir/Patient", headers=patient.headers)).json()["entry"][0]["resource"]["id"]
    others = [p.split("/")[1] for p in await _patients_of_doctor(client, (await login("doctor1")).headers)]
    other = next(p for p in others if p != own)
    value = (await _launch(client, admin.headers, ehr_app, other)).json()["launch"]
    started = await client.get("/oauth/authorize", params=authorize_query(ehr_app, SCOPE, launch=value))
    consent = started.headers["location"].split("#", 1)[1]
    refused = await client.post(f"{consent}/allow", headers=patient.headers)
    assert refused.status_code == 422 and set(refused.json()["fields"]) == {"patient"}
    # Nothing was decided: the doctor (staff, within their own rights) may still allow it.
    allowed = await client.post(f"{consent}/allow", headers=(await login("doctor1")).headers)
    assert allowed.status_code == 200 and "code=" in allowed.json()["leave"]
