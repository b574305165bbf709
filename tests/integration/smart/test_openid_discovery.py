"""OpenID Connect discovery at the advertised issuer: ``{issuer}/.well-known/openid-configuration`` is valid by
Authlib's own reading of OpenID Connect Discovery 1.0 (an independent client), agrees field by field with SMART's
``/fhir/.well-known/smart-configuration``, and every endpoint it names answers; an id token's ``iss`` is the
issuer found there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from authlib.oidc.discovery import OpenIDProviderMetadata, get_well_known_url
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.integration.smart.conftest import exchange

ISSUER = "http://testserver"


def _path(url: str) -> str:
    return urlsplit(url).path


async def test_the_issuers_openid_configuration_is_valid_and_agrees_with_smarts(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = await client.get(_path(get_well_known_url(ISSUER, external=True)))
    assert found.status_code == 200 and found.headers["content-type"] == "application/json"
    document = found.json()
    # Authlib insists on https issuers; the test server is plain http on no network.
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    OpenIDProviderMetadata(document).validate()
    assert document["issuer"] == ISSUER
    smart = (await client.get("/fhir/.well-known/smart-configuration")).json()
    for name, value in smart.items():
        if name != "capabilities":  # SMART's own word
            assert document[name] == value, name
    assert document["subject_types_supported"] == ["public"] and "openid" in document["scopes_supported"]


async def test_every_endpoint_the_document_names_answers(client: httpx.AsyncClient) -> None:
    document = (await client.get("/.well-known/openid-configuration")).json()
    keys = await client.get(_path(document["jwks_uri"]))
    assert keys.status_code == 200 and KeySet.import_key_set(keys.json()).keys
    # The token and revocation endpoints answer OAuth 2's errors to an empty request, not 404.
    token = await client.post(_path(document["token_endpoint"]), data={})
    assert token.status_code == 400 and token.json()["error"] == "unsupported_grant_type"
    revoke = await client.post(_path(document["revocation_endpoint"]), data={})
    assert revoke.status_code in (400, 401) and "error" in revoke.json()
    authorize = await client.get(_path(document["authorization_endpoint"]), params={"client_id": "nobody"})
    assert authorize.status_code == 400 and authorize.json()["error"]


async def test_an_id_tokens_issuer_is_the_one_discovery_names(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    scope = "openid fhirUser launch/patient patient/Appointment.rs"
    app = await register(scopes=scope.split())
    answer = (await exchange(client, app, await launch(app, scope))).json()
    document = (await client.get("/.well-known/openid-configuration")).json()
    keys = KeySet.import_key_set((await client.get(_path(document["jwks_uri"]))).json())
    claims = jwt.decode(answer["id_token"], keys).claims
    assert claims["iss"] == document["issuer"]
    assert set(claims) <= set(document["claims_supported"])
