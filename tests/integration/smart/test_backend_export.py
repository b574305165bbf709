"""A clinic's data warehouse the standard way: a backend service signs its own assertion with Authlib's
``private_key_jwt`` client, gets a ``system/*.rs`` token and runs a Bulk Data export end to end (kick-off, status,
manifest, every NDJSON line a valid R4 resource); a replayed assertion gets no second token; another backend
service never sees the job; a token for appointments alone cannot export patients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from doctordesk.config import Settings
from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.store.tables import Appointment, Patient
from tests.integration.smart.test_backend_services import (
    EC,
    RSA,
    TOKEN,
    ClockedKeyJWT,
    assertion_post,
    jwks,
    oauth_client,
    refused,
    signed,
)
from tests.support.bulk import ASYNC, kick_off, manifest, resources, run_exports


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url, bulk_in_process=False, bulk_page_size=10)


async def _register(client: httpx.AsyncClient, login: Callable[[str], Any], name: str, keys: Any, scope: str) -> str:
    admin = await login("admin")
    body = {"name": name, "kind": "backend", "allowed_scopes": [scope], "jwks": keys}
    answer = await client.post("/admin/smart-apps", headers=admin.headers, json=body)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


async def test_a_backend_service_exports_the_whole_clinic_with_a_token_it_got_by_its_signed_assertion(
    app: FastAPI, client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock, login: Callable[[str], Any]
) -> None:
    client_id = await _register(client, login, "Warehouse", jwks(RSA), "system/*.rs")
    auth = ClockedKeyJWT(clock, alg="RS384", kid=RSA.kid)
    async with oauth_client(app, client_id, RSA, auth) as warehouse:
        token = await warehouse.fetch_token(TOKEN, grant_type="client_credentials", scope="system/*.rs")
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        status_url = await kick_off(warehouse, headers)
        await run_exports(runtime)
        body = await manifest(warehouse, headers, status_url)
        found = await resources(warehouse, headers, body)
    async with runtime.db.read() as session:
        appointments = await session.scalar(select(func.count()).select_from(Appointment))
        patients = await session.scalar(select(func.count()).select_from(Patient))
    assert len(found["Appointment"]) == appointments and appointments
    assert len(found["Patient"]) == patients and patients


async def test_a_replayed_assertion_gets_no_second_token(
    client: httpx.AsyncClient, clock: FixedClock, login: Callable[[str], Any]
) -> None:
    client_id = await _register(client, login, "Warehouse", jwks(EC), "system/*.rs")
    assertion = signed(clock, client_id, EC, alg="ES384")
    first = await assertion_post(client, assertion, scope="system/*.rs")
    assert first.status_code == 200, first.text
    refused(await assertion_post(client, assertion, scope="system/*.rs"))


async def test_another_backend_service_cannot_see_the_job_and_a_narrow_token_cannot_export_patients(
    client: httpx.AsyncClient, clock: FixedClock, login: Callable[[str], Any]
) -> None:
    warehouse = await _register(client, login, "Warehouse", jwks(RSA), "system/*.rs")
    billing = await _register(client, login, "Billing", jwks(EC), "system/Appointment.rs")

    async def bearer(client_id: str, key: Any, alg: str, scope: str) -> dict[str, str]:
        answer = await assertion_post(client, signed(clock, client_id, key, alg=alg), scope=scope)
        assert answer.status_code == 200, answer.text
        return {"Authorization": f"Bearer {answer.json()['access_token']}"}

    mine = await bearer(warehouse, RSA, "RS384", "system/*.rs")
    theirs = await bearer(billing, EC, "ES384", "system/Appointment.rs")
    status_url = await kick_off(client, mine)
    assert (await client.get(status_url, headers=theirs)).status_code == 404
    narrow = await client.get("/fhir/$export", params={"_type": "Patient"}, headers={**theirs, **ASYNC})
    assert narrow.status_code == 403, narrow.text
    assert (
        await client.get("/fhir/$export", params={"_type": "Appointment"}, headers={**theirs, **ASYNC})
    ).status_code == 202
