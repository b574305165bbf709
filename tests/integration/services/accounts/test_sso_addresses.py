"""Single sign-on dials public addresses only unless the clinic allows its own network
(``DOCTORDESK_SSO_ALLOW_PRIVATE_ADDRESSES``, docs/accounts.md#single-sign-on): an issuer on a private or local host
is refused when saved, and the address actually dialled is checked — a provider whose name now leads to a private
address is never reached."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import httpcore
import httpx
import pytest

from doctordesk.realtime.outbound import PublicOnlyBackend, PublicOnlyTransport
from doctordesk.store.mfa_tables import SsoProvider
from tests.support.errors import assert_error
from tests.support.openid_provider import OpenIDProvider, running_provider

PUBLIC = "93.184.215.14"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIDProvider]:
    callback = "http://testserver/auth/sso/clinic/callback"
    with running_provider(tmp_path_factory.mktemp("op"), redirect_uris=[callback], users={}, passwords={}) as op:
        yield op


@pytest.fixture
def settings(database_url, settings_factory, provider):
    return settings_factory(database_url, sso_ca_file=provider.ca_file)  # private addresses not allowed


@pytest.mark.parametrize(
    "issuer", ["https://127.0.0.1:8443/op", "https://localhost/op", "http://10.1.2.3", "https://[::1]/", "https://idp"]
)
async def test_an_issuer_on_a_private_or_local_host_is_refused_when_saved(client, login, issuer):
    admin = await login("admin")
    body = {"name": "X", "issuer": issuer, "client_id": "c", "client_secret": "s"}
    refused = assert_error(
        await client.put("/admin/sso-providers/clinic", json=body, headers=admin.headers), 422,
        "FIELDS_VALIDATION_ERROR",
    )  # fmt: skip
    assert set(refused["fields"]) == {"issuer"}


async def test_a_provider_whose_address_is_private_by_now_is_never_dialled(client, runtime, demo, provider):
    # Saved while its name led elsewhere: the row as the check let it through; now it leads to loopback.
    now = runtime.clock.now()
    async with runtime.db.transaction() as session:
        session.add(
            SsoProvider(
                slug="clinic", name="Clinic Login", issuer=provider.issuer, client_id=provider.client_id,
                client_secret=provider.client_secret, created_at=now, updated_at=now,
            )
        )  # fmt: skip
    started = await client.get("/auth/sso/clinic/start")
    assert_error(started, 401, "UNAUTHORIZED")
    assert "cannot be reached" in started.json()["message"]


class Dialled(httpcore.AsyncNetworkBackend):
    """Records each address it is asked to dial and answers that nothing listens there."""

    def __init__(self) -> None:
        self.addresses: list[str] = []

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.addresses.append(host)
        raise httpcore.ConnectError(f"nothing at {host}")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def test_only_the_public_addresses_of_a_name_are_dialled():
    dialled = Dialled()

    async def resolve(host: str, port: int) -> list[str]:
        return {"mixed.example": ["10.0.0.7", PUBLIC, "::1"], "inside.example": ["192.168.1.2", "fe80::1"]}[host]

    backend = PublicOnlyBackend(dialled, resolve=resolve)
    with pytest.raises(httpcore.ConnectError, match="nothing at"):
        await backend.connect_tcp("mixed.example", 443)
    assert dialled.addresses == [PUBLIC]
    with pytest.raises(httpcore.ConnectError, match="refused: not a public address: inside.example"):
        await backend.connect_tcp("inside.example", 443)
    with pytest.raises(httpcore.ConnectError, match="refused"):
        await backend.connect_tcp("127.0.0.1", 443)  # a literal is checked without resolving
    with pytest.raises(httpcore.ConnectError, match="refused"):
        await backend.connect_unix_socket("/run/idp.sock")
    assert dialled.addresses == [PUBLIC]


async def test_a_real_loopback_server_gets_no_connection_through_the_checked_transport():
    accepted: list[object] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        transport = PublicOnlyTransport(verify=ssl.create_default_context())
        async with httpx.AsyncClient(transport=transport) as http:
            with pytest.raises(httpx.ConnectError, match="not a public address"):
                await http.get(f"http://127.0.0.1:{port}/.well-known/openid-configuration")
            with pytest.raises(httpx.ConnectError, match="not a public address"):
                await http.get(f"http://localhost:{port}/")
        async with httpx.AsyncClient() as plain:  # the same server answers an unchecked client
            with pytest.raises(httpx.HTTPError):
                await plain.get(f"http://127.0.0.1:{port}/")
    finally:
        server.close()
        await server.wait_closed()
    assert len(accepted) == 1  # only the unchecked client's
