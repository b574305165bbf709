"""A data warehouse exports the clinic from a real server the standard way, with Authlib's OAuth 2 client for httpx
and its ``private_key_jwt`` client authentication: registered by the admin with its public key, it finds the token
endpoint in the SMART discovery document, gets a ``system/*.rs`` token, kicks off ``/fhir/$export``, follows the
status URL (202 with ``X-Progress`` and ``Retry-After`` while it runs) to the manifest, reads every NDJSON file
(each line a valid R4 resource) and deletes the job. Nothing in the test writes the export: on SQLite the server's
own exporter does (the default), on PostgreSQL a separate ``doctordesk worker`` (the server's exporter off, Redis
between them), as in a scaled-out deployment (docs/fhir.md#bulk-export)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from joserfc.jwk import RSAKey

from tests.support import databases, processes
from tests.support.fhir_models import validate
from tests.support.live import LiveServer

KEY = RSAKey.generate_key(2048, parameters={"kid": "warehouse-rsa"})
TYPES = ["Patient", "Practitioner", "Location", "Appointment", "Group"]
EXPORT_SECONDS = 120  # a generous bound on a loaded machine; the demo clinic's export takes well under a second


class FreshKeyJWT(PrivateKeyJWT):
    """``private_key_jwt`` with ``exp`` under five minutes ahead (Authlib's default is an hour, more than SMART
    allows) and a new ``jti`` for every request."""

    def sign(self, auth: Any, token_endpoint: str) -> str:
        self.claims = {"exp": int(time.time()) + 290, "jti": generate_token(24)}
        signed: str = super().sign(auth, token_endpoint)
        return signed


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.redis])])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """The server, and on PostgreSQL the separate worker that writes its exports."""
    if request.param == "sqlite":
        server = LiveServer(tmp_path / "server")
        server.prepare()
        server.start()
        try:
            yield server
        finally:
            server.stop()
        return
    url = databases.postgres_url()
    asyncio.run(databases.truncate_postgres(url))
    env = {
        "DOCTORDESK_DATABASE_URL": url,
        "DOCTORDESK_REDIS_URL": databases.redis_url(),
        "DOCTORDESK_REDIS_CHANNEL": secrets.token_hex(4),
        "DOCTORDESK_BULK_IN_PROCESS": "false",
    }
    server = LiveServer(tmp_path / "server", extra_env=env)
    server.prepare()
    server.start()
    log = tmp_path / "worker.log"
    worker = processes.launch(["doctordesk", "worker"], server.env, log)
    try:
        yield server
    finally:
        worker.terminate()
        try:
            assert worker.wait(30) == 0, log.read_text()  # stopped cleanly
        finally:
            server.stop()


def _register(base: str) -> tuple[str, int]:
    """The warehouse's client id (registered by the admin with its public key) and the clinic's appointments."""
    with httpx.Client(base_url=base, timeout=30) as http:
        admin = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {admin}"}
        body = {
            "name": "Warehouse",
            "kind": "backend",
            "allowed_scopes": ["system/*.rs"],
            "jwks": {"keys": [KEY.as_dict(private=False)]},
        }
        registered = http.post("/admin/smart-apps", headers=headers, json=body)
        assert registered.status_code == 201, registered.text
        every = http.get("/fhir/Appointment?_summary=count", headers=headers).json()["total"]
    return str(registered.json()["client_id"]), int(every)


def _manifest(service: OAuth2Client, status_url: str) -> dict[str, Any]:
    """Follow the status URL until the export is complete (as a Bulk Data client does, within a bound)."""
    deadline = time.monotonic() + EXPORT_SECONDS
    while True:
        answer = service.get(status_url)
        if answer.status_code == 200:
            body: dict[str, Any] = answer.json()
            return body
        assert answer.status_code == 202, answer.text
        assert answer.headers["x-progress"] and int(answer.headers["retry-after"]) > 0
        assert time.monotonic() < deadline, f"not complete in {EXPORT_SECONDS} s: {answer.headers['x-progress']}"
        time.sleep(0.1)


def test_a_warehouse_exports_the_clinic_with_a_token_it_got_by_its_signed_assertion(deployment: LiveServer) -> None:
    base = deployment.url
    client_id, appointments = _register(base)
    token_url = httpx.get(f"{base}/fhir/.well-known/smart-configuration").json()["token_endpoint"]
    auth = FreshKeyJWT(token_url, headers={"kid": KEY.kid}, alg="RS384")
    with OAuth2Client(client_id, KEY, token_endpoint_auth_method=auth, scope="system/*.rs", timeout=30) as service:
        token = service.fetch_token(token_url, grant_type="client_credentials")
        assert token["scope"] == "system/*.rs" and "refresh_token" not in token
        kicked = service.get(
            f"{base}/fhir/$export", headers={"Prefer": "respond-async", "Accept": "application/fhir+json"}
        )
        assert kicked.status_code == 202, kicked.text
        status_url = kicked.headers["content-location"]
        manifest = _manifest(service, status_url)
        assert manifest["requiresAccessToken"] is True and manifest["error"] == []
        assert manifest["request"] == f"{base}/fhir/$export"
        assert [o["type"] for o in manifest["output"]] == TYPES
        found: dict[str, list[str]] = {}
        for output in manifest["output"]:
            with service.stream("GET", output["url"]) as answer:
                assert answer.status_code == 200
                assert answer.headers["content-type"].startswith("application/fhir+ndjson")
                lines = [line for line in answer.iter_lines() if line]
            assert len(lines) == output["count"]
            for line in lines:
                resource = json.loads(line)
                assert resource["resourceType"] == output["type"]
                validate(resource)
                found.setdefault(output["type"], []).append(resource["id"])
        assert len(found["Appointment"]) == len(set(found["Appointment"])) == appointments > 0
        # Done with it: the job and its files go.
        assert service.delete(status_url).status_code == 202
        assert service.get(status_url).status_code == 404
        assert service.get(manifest["output"][0]["url"]).status_code == 404
