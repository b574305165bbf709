"""SMART Backend Services: a system registered by the admin with its public keys gets a short-lived token for its
``system/`` scopes with Authlib's ``private_key_jwt`` client (RS384 and ES384), and reads the whole clinic within
them; every bad client assertion (replayed, wrong audience, too long-lived, unknown kid, wrong key, a jku not
registered) is ``invalid_client``, a scope beyond the registered ones ``invalid_scope``; a JWKS URL is read from a
real loopback server only when the outbound address rule allows loopback; a system token cannot write nor read
other types."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oauth2.rfc7523 import PrivateKeyJWT, private_key_jwt_sign
from fastapi import FastAPI
from joserfc.jwk import ECKey, RSAKey
from sqlalchemy import func, select

from doctordesk.domain.clock import FixedClock
from doctordesk.runtime import Runtime
from doctordesk.store.smart_tables import SmartAssertionJti, SmartClient
from doctordesk.store.tables import Appointment, AuditLog

TOKEN = "http://testserver/oauth/token"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
RSA = RSAKey.generate_key(2048, parameters={"kid": "rsa-1"})
EC = ECKey.generate_key("P-384", parameters={"kid": "ec-1"})
OTHER_RSA = RSAKey.generate_key(2048, parameters={"kid": "rsa-1"})  # the same kid, another key


def jwks(*keys: RSAKey | ECKey) -> dict[str, Any]:
    return {"keys": [k.as_dict(private=False) for k in keys]}


class ClockedKeyJWT(PrivateKeyJWT):
    """Authlib's ``private_key_jwt``, its times from the server's (test) clock, a fresh jti on every request."""

    def __init__(self, clock: FixedClock, *, alg: str, kid: str, ahead: int = 240, **claims: Any) -> None:
        super().__init__(TOKEN, headers={"kid": kid}, alg=alg)
        self._clock, self._ahead, self._extra = clock, ahead, claims

    def sign(self, auth: Any, token_endpoint: str) -> str:
        now = int(self._clock.now().timestamp())
        self.claims = {"iat": now, "exp": now + self._ahead, "jti": generate_token(24), **self._extra}
        signed: str = super().sign(auth, token_endpoint)
        return signed


@pytest.fixture
def register_service(client: httpx.AsyncClient, login: Callable[[str], Any]) -> Callable[..., Any]:
    async def do(*, scopes: list[str], name: str = "Record system", **keys: Any) -> str:
        admin = await login("admin")
        body = {"name": name, "kind": "backend", "allowed_scopes": scopes, **keys}
        answer = await client.post("/admin/smart-apps", headers=admin.headers, json=body)
        assert answer.status_code == 201, answer.text
        assert answer.json()["client_secret"] is None and answer.json()["redirect_uris"] == []
        return str(answer.json()["client_id"])

    return do


def oauth_client(app: FastAPI, client_id: str, key: RSAKey | ECKey, auth: PrivateKeyJWT) -> AsyncOAuth2Client:
    session = AsyncOAuth2Client(
        client_id, key, token_endpoint_auth_method=auth.name, transport=httpx.ASGITransport(app=app),
        base_url="http://testserver",
    )  # fmt: skip
    session.register_client_auth_method(auth)
    return session


async def assertion_post(client: httpx.AsyncClient, assertion: str, scope: str = "system/Appointment.rs") -> Any:
    form = {
        "grant_type": "client_credentials",
        "scope": scope,
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": assertion,
    }
    return await client.post("/oauth/token", data=form)


def signed(clock: FixedClock, client_id: str, key: RSAKey | ECKey, *, alg: str = "RS384", **claims: Any) -> str:
    now = int(clock.now().timestamp())
    claims = {"iat": now, "exp": now + 240, "jti": generate_token(24), **claims}
    header = {"kid": claims.pop("kid", key.kid)}
    if "jku" in claims:
        header["jku"] = claims.pop("jku")
    aud = claims.pop("aud", TOKEN)
    assertion: str = private_key_jwt_sign(key, client_id, aud, alg=alg, claims=claims, header=header)
    return assertion


def refused(answer: httpx.Response, error: str = "invalid_client") -> None:
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == error and answer.headers["cache-control"] == "no-store", answer.text


@pytest.mark.parametrize(("key", "alg"), [(RSA, "RS384"), (EC, "ES384")])
async def test_a_backend_service_reads_the_whole_clinic_with_its_own_signed_assertion(
    app: FastAPI, runtime: Runtime, clock: FixedClock, register_service: Callable[..., Any], key: Any, alg: str
) -> None:
    client_id = await register_service(scopes=["system/Appointment.rs"], jwks=jwks(key))
    auth = ClockedKeyJWT(clock, alg=alg, kid=key.kid)
    async with oauth_client(app, client_id, key, auth) as service:
        token = await service.fetch_token(TOKEN, grant_type="client_credentials", scope="system/Appointment.rs")
        assert token["token_type"].lower() == "bearer" and token["access_token"].startswith("ddst_")
        assert token["expires_in"] == 300 and token["scope"] == "system/Appointment.rs"
        assert "refresh_token" not in token and "patient" not in token
        bundle = (await service.get("/fhir/Appointment?_total=accurate&_count=1")).json()
    async with runtime.db.read() as session:
        every = await session.scalar(select(func.count()).select_from(Appointment))
        audited = await session.scalar(select(func.count()).where(AuditLog.action == "smart.system-token"))
    assert bundle["total"] == every and every > 0  # the whole clinic, not one doctor's
    assert audited == 1


async def test_a_system_token_cannot_write_nor_read_types_outside_its_scopes(
    app: FastAPI, client: httpx.AsyncClient, clock: FixedClock, register_service: Callable[..., Any]
) -> None:
    client_id = await register_service(scopes=["system/Appointment.rs"], jwks=jwks(RSA))
    token = (await assertion_post(client, signed(clock, client_id, RSA))).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    some = (await client.get("/fhir/Appointment?_count=1", headers=bearer)).json()["entry"][0]["resource"]
    assert (await client.get(f"/fhir/Appointment/{some['id']}", headers=bearer)).status_code == 200
    patient = some["participant"][0]["actor"]["reference"]
    assert (await client.get(f"/fhir/{patient}", headers=bearer)).status_code == 403
    assert (await client.get("/fhir/Patient", headers=bearer)).status_code == 403
    body = {"resourceType": "Appointment", "status": "proposed"}
    written = await client.post("/fhir/Appointment", headers={**bearer, "Content-Type": "application/fhir+json"},
                                content=json.dumps(body))  # fmt: skip
    assert written.status_code == 403
    cancelled = await client.post(f"/fhir/Appointment/{some['id']}/$cancel", headers=bearer)
    assert cancelled.status_code == 403
    # What a search brings along obeys the same scopes: no Patient included.
    included = (await client.get("/fhir/Appointment?_include=Appointment:patient", headers=bearer)).json()
    assert {e["search"]["mode"] for e in included["entry"]} == {"match"}
    # A system token is for the FHIR interface only.
    assert (await client.get("/auth/me", headers=bearer)).status_code == 401


async def test_a_replayed_assertion_is_refused_and_its_jti_kept_until_it_expires(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock, register_service: Callable[..., Any]
) -> None:
    client_id = await register_service(scopes=["system/*.rs"], jwks=jwks(RSA))
    once = signed(clock, client_id, RSA)
    assert (await assertion_post(client, once)).status_code == 200
    refused(await assertion_post(client, once))
    async with runtime.db.read() as session:
        kept = (await session.scalars(select(SmartAssertionJti))).all()
    assert len(kept) == 1 and kept[0].expires_at.timestamp() == int(clock.now().timestamp()) + 240
    # A new jti is a new assertion.
    assert (await assertion_post(client, signed(clock, client_id, RSA))).status_code == 200


async def test_bad_assertions_are_invalid_client(
    client: httpx.AsyncClient,
    clock: FixedClock,
    register_service: Callable[..., Any],
    register: Callable[..., Any],
) -> None:
    client_id = await register_service(scopes=["system/Appointment.rs"], jwks=jwks(RSA, EC))
    # A user-facing app is no backend service, whatever it signs.
    portal = await register(scopes=["patient/Appointment.rs"])
    refused(await assertion_post(client, signed(clock, portal.client_id, RSA)))
    now = int(clock.now().timestamp())
    refused(await assertion_post(client, signed(clock, client_id, RSA, aud="http://testserver/fhir")))
    refused(await assertion_post(client, signed(clock, client_id, RSA, exp=now + 10 * 60)))
    refused(await assertion_post(client, signed(clock, client_id, RSA, exp=now - 120)))
    refused(await assertion_post(client, signed(clock, client_id, RSA, kid="rsa-unknown")))
    refused(await assertion_post(client, signed(clock, client_id, OTHER_RSA)))  # its kid, another key
    refused(await assertion_post(client, signed(clock, client_id, RSA, sub="someone-else")))
    refused(await assertion_post(client, signed(clock, client_id, RSA, alg="RS256")))
    # A jku names where the keys are; none was registered here, so any is refused (SMART: never fetched).
    refused(await assertion_post(client, signed(clock, client_id, RSA, jku="https://keys.example.org/jwks")))
    refused(await assertion_post(client, signed(clock, "smart_unknown", RSA)))
    refused(await assertion_post(client, "not.a.jwt"))
    missing = await client.post("/oauth/token", data={"grant_type": "client_credentials", "scope": "system/*.rs"})
    refused(missing, "invalid_request")
    # The same good assertion passes: only what was wrong above was refused.
    assert (await assertion_post(client, signed(clock, client_id, EC, alg="ES384"))).status_code == 200


async def test_scopes_beyond_the_registered_ones_are_invalid_scope(
    client: httpx.AsyncClient, clock: FixedClock, register_service: Callable[..., Any]
) -> None:
    client_id = await register_service(scopes=["system/Appointment.rs"], jwks=jwks(RSA))
    for scope in ("system/Patient.rs", "system/*.rs", "user/Appointment.rs", "system/Appointment.cruds", ""):
        refused(await assertion_post(client, signed(clock, client_id, RSA), scope=scope), "invalid_scope")
    narrower = await assertion_post(client, signed(clock, client_id, RSA), scope="system/Appointment.s")
    assert narrower.status_code == 200 and narrower.json()["scope"] == "system/Appointment.s"


async def test_a_deactivated_service_and_an_expired_token_are_refused(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: FixedClock,
    register_service: Callable[..., Any],
    login: Callable[[str], Any],
) -> None:
    client_id = await register_service(scopes=["system/Appointment.rs"], jwks=jwks(RSA))
    token = (await assertion_post(client, signed(clock, client_id, RSA))).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 200
    async with runtime.db.read() as session:
        pk = await session.scalar(select(SmartClient.id).where(SmartClient.client_id == client_id))
    admin = await login("admin")
    assert (await client.post(f"/admin/smart-apps/{pk}/deactivate", headers=admin.headers)).status_code == 200
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 401
    refused(await assertion_post(client, signed(clock, client_id, RSA)))
    assert (await client.post(f"/admin/smart-apps/{pk}/reactivate", headers=admin.headers)).status_code == 200
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 200
    clock.advance(timedelta(minutes=5))
    assert (await client.get("/fhir/Appointment", headers=bearer)).status_code == 401


class _KeysServer:
    """A real HTTP server on loopback serving a JWKS, counting the times it was read."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document, self.reads = document, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.reads += 1
                body = json.dumps(owner.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"


@pytest.fixture
def keys_server() -> Iterator[_KeysServer]:
    served = _KeysServer(jwks(EC))
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


async def test_a_jwks_url_on_loopback_is_read_only_where_the_address_rule_allows_it_and_is_cached(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: FixedClock,
    register_service: Callable[..., Any],
    keys_server: _KeysServer,
    login: Callable[[str], Any],
) -> None:
    # A loopback address is refused at registration unless the server allows private addresses...
    admin = await login("admin")
    body = {"name": "Records", "kind": "backend", "allowed_scopes": ["system/*.rs"], "jwks_uri": keys_server.url}
    early = await client.post("/admin/smart-apps", headers=admin.headers, json=body)
    assert early.status_code == 422 and set(early.json()["fields"]) == {"jwks_uri"}
    runtime.settings.smart_jwks_allow_private_addresses = True
    client_id = await register_service(scopes=["system/*.rs"], jwks_uri=keys_server.url)
    # ...and checked again on the address actually dialled: with private addresses refused again, the key set is
    # not fetched (nothing reaches the server) and the assertion is refused.
    runtime.settings.smart_jwks_allow_private_addresses = False
    refused(await assertion_post(client, signed(clock, client_id, EC, alg="ES384"), scope="system/*.rs"))
    assert keys_server.reads == 0
    runtime.settings.smart_jwks_allow_private_addresses = True
    for _ in range(2):
        answer = await assertion_post(client, signed(clock, client_id, EC, alg="ES384"), scope="system/*.rs")
        assert answer.status_code == 200, answer.text
    assert keys_server.reads == 1  # the key set was kept
    # A jku may name the registered key set URL, and nothing else.
    with_jku = signed(clock, client_id, EC, alg="ES384", jku=keys_server.url)
    assert (await assertion_post(client, with_jku, scope="system/*.rs")).status_code == 200
    elsewhere = signed(clock, client_id, EC, alg="ES384", jku=keys_server.url + "?other")
    refused(await assertion_post(client, elsewhere, scope="system/*.rs"))
    assert keys_server.reads == 1
    bearer = {"Authorization": f"Bearer {answer.json()['access_token']}"}
    assert (await client.get("/fhir/Patient?_count=5", headers=bearer)).status_code == 200
    # What only admins or owners see stays theirs, whatever system/*.rs says.
    assert (await client.get("/fhir/AuditEvent", headers=bearer)).status_code == 403
    subscriptions = await client.get("/fhir/Subscription", headers=bearer)
    assert subscriptions.status_code == 200 and not subscriptions.json().get("entry")
    # The service rotates its key: a kid the kept set does not hold is refused until the set may be read again
    # (30 seconds after the last read), then the set is read again and the new key works.
    keys_server.document = jwks(RSA)
    refused(await assertion_post(client, signed(clock, client_id, RSA), scope="system/*.rs"))
    assert keys_server.reads == 1
    clock.advance(timedelta(seconds=31))
    assert (await assertion_post(client, signed(clock, client_id, RSA), scope="system/*.rs")).status_code == 200
    assert keys_server.reads == 2
    # The old key is gone from the set read: refused, without reading it again so soon.
    refused(await assertion_post(client, signed(clock, client_id, EC, alg="ES384"), scope="system/*.rs"))
    assert keys_server.reads == 2
    # A kept set is read again after DOCTORDESK_SMART_JWKS_CACHE_SECONDS, known kid or not.
    clock.advance(timedelta(seconds=runtime.settings.smart_jwks_cache_seconds))
    assert (await assertion_post(client, signed(clock, client_id, RSA), scope="system/*.rs")).status_code == 200
    assert keys_server.reads == 3


async def test_registering_a_backend_service_is_checked_and_audited(
    client: httpx.AsyncClient, runtime: Runtime, login: Callable[[str], Any]
) -> None:
    admin = await login("admin")

    async def register(**body: Any) -> httpx.Response:
        base = {"name": "Records", "kind": "backend", "allowed_scopes": ["system/Appointment.rs"]}
        return await client.post("/admin/smart-apps", headers=admin.headers, json={**base, **body})

    def fields(answer: httpx.Response) -> set[str]:
        assert answer.status_code == 422, answer.text
        return set(answer.json()["fields"])

    assert fields(await register()) == {"jwks_uri"}  # no keys
    assert fields(await register(jwks=jwks(RSA), jwks_uri="https://records.example.org/jwks")) == {"jwks_uri"}
    assert fields(await register(jwks={"keys": [RSA.as_dict(private=True)]})) == {"jwks"}  # a private key
    assert fields(await register(jwks=jwks(RSA), allowed_scopes=["user/Appointment.rs"])) == {"allowed_scopes"}
    assert fields(await register(jwks=jwks(RSA), redirect_uris=["https://a.example.org/cb"])) == {"redirect_uris"}
    assert fields(await register(jwks_uri="http://records.example.org/jwks")) == {"jwks_uri"}  # not https
    app = {"name": "Portal", "kind": "public", "redirect_uris": ["https://a.example.org/cb"]}
    user_app = await client.post(
        "/admin/smart-apps", headers=admin.headers, json={**app, "allowed_scopes": ["system/Appointment.rs"]}
    )
    assert fields(user_app) == {"allowed_scopes"}
    made = await register(jwks=jwks(RSA, EC))
    assert made.status_code == 201 and made.json()["key_ids"] == ["rsa-1", "ec-1"]
    async with runtime.db.read() as session:
        row = await session.scalar(select(AuditLog).where(AuditLog.action == "smart-client.register"))
    assert row is not None and row.details["after"]["kind"] == "backend"
    assert row.details["after"]["key_ids"] == ["rsa-1", "ec-1"]


async def test_discovery_names_backend_services(client: httpx.AsyncClient) -> None:
    config = (await client.get("/fhir/.well-known/smart-configuration")).json()
    assert "client-confidential-asymmetric" in config["capabilities"]
    assert "private_key_jwt" in config["token_endpoint_auth_methods_supported"]
    assert config["token_endpoint_auth_signing_alg_values_supported"] == ["RS384", "ES384"]
    assert "client_credentials" in config["grant_types_supported"]
    assert {"system/*.rs", "system/Appointment.rs"} <= set(config["scopes_supported"])


async def test_the_smart_apps_screen_registers_a_backend_service_and_shows_it_in_german(
    client: httpx.AsyncClient, clock: FixedClock, login: Callable[[str], Any], runtime: Runtime
) -> None:
    from tests.integration.web.test_german_screens import assert_german

    admin = await login("admin")
    form = {"name": "Records", "kind": "backend", "redirect_uris": "", "allowed_scopes": "system/Appointment.rs"}
    bad = await client.post("/profile/admin/smart-apps/create", headers=admin.headers, data={**form, "jwks": "{keys"})
    assert bad.status_code == 422 and set(bad.json()["fields"]) == {"jwks"}
    created = await client.post(
        "/profile/admin/smart-apps/create", headers=admin.headers, data={**form, "jwks": json.dumps(jwks(RSA))}
    )
    assert created.status_code == 200, created.text
    page = (await client.put("/profile/admin/smart-apps", headers=admin.headers)).json()
    texts = json.dumps(page)
    assert "Keys: rsa-1" in texts and "Backend service" in texts
    listed = (await client.get("/admin/smart-apps", headers=admin.headers)).json()["smart_apps"][0]
    assert listed["kind"] == "backend" and listed["key_ids"] == ["rsa-1"]
    # The service registered on the screen gets its token.
    assert (await assertion_post(client, signed(clock, listed["client_id"], RSA))).status_code == 200
    await assert_german(client, admin.headers, ["/profile/admin/smart-apps"], runtime)
