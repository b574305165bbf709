"""A backend service against a real server, with Authlib's OAuth 2 client for httpx and its ``private_key_jwt``
client authentication: registered by the admin with its JWKS at a URL served by a real HTTP server on loopback
(the server allows private addresses for it, as the webhook and single sign-on tests do), it gets a token with an
RS384 key and with an ES384 key and reads every appointment; the same assertion sent again is refused."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from joserfc.jwk import ECKey, RSAKey

from tests.support.live import LiveServer, serving

RSA = RSAKey.generate_key(2048, parameters={"kid": "records-rsa"})
EC = ECKey.generate_key("P-384", parameters={"kid": "records-ec"})
KEY_SET = json.dumps({"keys": [RSA.as_dict(private=False), EC.as_dict(private=False)]}).encode()


class FreshKeyJWT(PrivateKeyJWT):
    """``private_key_jwt`` with ``exp`` five minutes ahead (Authlib's default is an hour, more than SMART allows)
    and a new ``jti`` for every request."""

    def sign(self, auth: Any, token_endpoint: str) -> str:
        self.claims = {"exp": int(time.time()) + 290, "jti": generate_token(24)}
        signed: str = super().sign(auth, token_endpoint)
        return signed


class _Keys(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(KEY_SET)))
        self.end_headers()
        self.wfile.write(KEY_SET)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def keys_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Keys)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("backend"), DOCTORDESK_SMART_JWKS_ALLOW_PRIVATE_ADDRESSES="true") as live:
        yield live


def test_a_backend_service_reads_every_appointment_with_rs384_and_es384_keys(server: LiveServer, keys_url: str) -> None:
    base = server.url
    with httpx.Client(base_url=base) as http:
        admin = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {admin}"}
        body = {"name": "Record system", "kind": "backend", "allowed_scopes": ["system/*.rs"], "jwks_uri": keys_url}
        registered = http.post("/admin/smart-apps", headers=headers, json=body)
        assert registered.status_code == 201, registered.text
        every = http.get("/fhir/Appointment?_total=accurate&_count=1", headers=headers).json()["total"]
    config = httpx.get(f"{base}/fhir/.well-known/smart-configuration").json()
    assert "private_key_jwt" in config["token_endpoint_auth_methods_supported"]
    token_url = config["token_endpoint"]
    for key, alg in ((RSA, "RS384"), (EC, "ES384")):
        auth = FreshKeyJWT(token_url, headers={"kid": key.kid}, alg=alg)
        with OAuth2Client(
            registered.json()["client_id"], key, token_endpoint_auth_method=auth, scope="system/Appointment.rs"
        ) as service:
            token = service.fetch_token(token_url, grant_type="client_credentials")
            assert token["scope"] == "system/Appointment.rs" and "refresh_token" not in token
            bundle = service.get(f"{base}/fhir/Appointment?_total=accurate&_count=1").json()
            assert bundle["total"] == every > 0
            assert service.get(f"{base}/fhir/Patient").status_code == 403


def test_the_same_assertion_twice_is_refused(server: LiveServer, keys_url: str) -> None:
    base = server.url
    with httpx.Client(base_url=base) as http:
        admin = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        body = {"name": "Replayer", "kind": "backend", "allowed_scopes": ["system/*.rs"], "jwks_uri": keys_url}
        client_id = http.post("/admin/smart-apps", headers={"Authorization": f"Bearer {admin}"}, json=body).json()[
            "client_id"
        ]
        assertion = FreshKeyJWT(f"{base}/oauth/token", headers={"kid": EC.kid}, alg="ES384").sign(
            type("Auth", (), {"client_id": client_id, "client_secret": EC})(), f"{base}/oauth/token"
        )
        form = {
            "grant_type": "client_credentials",
            "scope": "system/*.rs",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        }
        assert http.post("/oauth/token", data=form).status_code == 200
        again = http.post("/oauth/token", data=form)
    assert again.status_code == 400 and again.json()["error"] == "invalid_client"
