"""Single sign-on through a real OpenID Connect provider (pyop on a loopback port, tests/support/openid_provider.py):
an existing user found by a claim, a new one created with the role its groups map to, someone the mapping does
not admit refused, state bound to the browser, hand-offs once, logout local (SQLite and PostgreSQL)."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select, text

from doctordesk.store.tables import AccessToken, AuditLog, User
from tests.support.errors import assert_error
from tests.support.openid_provider import OpenIDProvider, running_provider, sign_in_at_provider

CALLBACK = "http://testserver/auth/sso/clinic/callback"
USERS = {
    "anna": {"preferred_username": "doctor1", "name": "Anna Berger", "email": "anna@clinic.example",
             "groups": ["doctors"]},
    "sam": {"preferred_username": "sam.support", "name": "Sam Support", "groups": ["support-team"]},
    "root": {"preferred_username": "it.root", "name": "IT Root", "groups": ["staff", "it-admins"]},
    "eve": {"preferred_username": "eve", "name": "Eve Visitor", "groups": ["visitors"]},
}  # fmt: skip


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIDProvider]:
    with running_provider(
        tmp_path_factory.mktemp("op"),
        redirect_uris=[CALLBACK],
        users=USERS,
        passwords={name: f"{name}-pw" for name in USERS},
    ) as op:
        yield op


@pytest.fixture
def settings(database_url, settings_factory, provider):
    """The service trusts the provider's self-signed certificate, as a clinic's own CA would be trusted, and its
    address on loopback, as a clinic allows its own network's provider."""
    return settings_factory(database_url, sso_ca_file=provider.ca_file, sso_allow_private_addresses=True)


@pytest.fixture
async def configured(client, login, provider):
    admin = await login("admin")
    body = {
        "name": "Clinic Login", "issuer": provider.issuer, "client_id": provider.client_id,
        "client_secret": provider.client_secret, "match_claim": "preferred_username", "role_claim": "groups",
        "role_map": {"support-team": "support", "it-admins": "admin"}, "create_users": True,
    }  # fmt: skip
    saved = await client.put("/admin/sso-providers/clinic", json=body, headers=admin.headers)
    assert saved.status_code == 200, saved.text
    assert "client_secret" not in saved.json()
    return admin


async def sso_sign_in(client, provider, username: str) -> httpx.Response:
    """The browser's part: start, the provider's form, back to our callback with the state cookie."""
    started = await client.get("/auth/sso/clinic/start")
    assert started.status_code == 302, started.text
    with httpx.Client(timeout=10, verify=ssl.create_default_context(cafile=str(provider.ca_file))) as http:
        back = sign_in_at_provider(http, started.headers["location"], username, f"{username}-pw")
    assert back.startswith(CALLBACK)
    return await client.get(back.removeprefix("http://testserver"))


def fragment(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    return {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).fragment).items()}


async def test_an_existing_user_is_found_by_the_claim_and_signs_in(client, configured, provider, demo, runtime):
    listed = (await client.get("/auth/sso")).json()
    assert listed == {"providers": [{"slug": "clinic", "name": "Clinic Login"}]}
    ticket = fragment(await sso_sign_in(client, provider, "anna"))["sso"]
    signed_in = await client.post("/auth/sso/redeem", json={"ticket": ticket})
    assert signed_in.status_code == 200, signed_in.text
    user = signed_in.json()["user"]
    assert (user["username"], user["role"], user["id"]) == ("doctor1", "doctor", demo.users["doctor1"])
    headers = {"Authorization": f"Bearer {signed_in.json()['access_token']}"}
    assert (await client.get("/api/appointments", headers=headers)).status_code == 200
    # A hand-off works once; logout ends the local session.
    assert_error(await client.post("/auth/sso/redeem", json={"ticket": ticket}), 401, "UNAUTHORIZED")
    assert (await client.post("/auth/logout", headers=headers)).status_code == 204
    assert_error(await client.get("/auth/me", headers=headers), 401, "UNAUTHORIZED")
    async with runtime.db.read() as session:
        logged = list(await session.scalars(select(AuditLog.action).where(AuditLog.actor_id == user["id"])))
    assert {"login-sso", "login", "logout"} <= set(logged)


async def test_the_session_a_hand_off_opens_says_which_device_redeemed_it(client, configured, provider, demo, runtime):
    ticket = fragment(await sso_sign_in(client, provider, "anna"))["sso"]
    firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
    signed_in = await client.post("/auth/sso/redeem", json={"ticket": ticket}, headers={"User-Agent": firefox})
    assert signed_in.status_code == 200, signed_in.text
    async with runtime.db.read() as session:
        token = await session.scalar(
            select(AccessToken).where(AccessToken.user_id == demo.users["doctor1"]).order_by(AccessToken.id.desc())
        )
    assert token is not None and (token.device_client, token.device_system) == ("Firefox", "Windows")


async def test_new_users_get_the_role_their_groups_map_to(client, configured, provider, runtime):
    for username, role in (("sam", "support"), ("root", "admin")):
        ticket = fragment(await sso_sign_in(client, provider, username))["sso"]
        user = (await client.post("/auth/sso/redeem", json={"ticket": ticket})).json()["user"]
        assert (user["username"], user["role"]) == (USERS[username]["preferred_username"], role)
    async with runtime.db.read() as session:
        sam = await session.scalar(select(User).where(User.username == "sam.support"))
    assert sam is not None and sam.display_name == "Sam Support"
    # The password route does not open an account made by single sign-on.
    refused = await client.post("/auth/login", data={"username": "sam.support", "password": "!sso"})
    assert_error(refused, 401, "UNAUTHORIZED")
    # The second sign-in finds the same user through the subject it was linked to.
    ticket = fragment(await sso_sign_in(client, provider, "sam"))["sso"]
    assert (await client.post("/auth/sso/redeem", json={"ticket": ticket})).json()["user"]["id"] == sam.id


async def test_someone_the_mapping_does_not_admit_is_refused(client, configured, provider):
    assert fragment(await sso_sign_in(client, provider, "eve")) == {"sso-error": "FORBIDDEN"}


async def test_a_callback_without_the_browsers_state_cookie_signs_nobody_in(client, configured, provider):
    started = await client.get("/auth/sso/clinic/start")
    with httpx.Client(timeout=10, verify=ssl.create_default_context(cafile=str(provider.ca_file))) as http:
        back = sign_in_at_provider(http, started.headers["location"], "anna", "anna-pw")
    client.cookies.clear()  # another browser follows the link
    assert fragment(await client.get(back.removeprefix("http://testserver"))) == {"sso-error": "UNAUTHORIZED"}


async def test_only_admins_configure_providers_and_the_secret_is_never_shown(client, configured, login):
    doctor = await login("doctor1")
    assert_error(await client.get("/admin/sso-providers", headers=doctor.headers), 403, "FORBIDDEN")
    listed = (await client.get("/admin/sso-providers", headers=configured.headers)).json()["providers"]
    assert [p["slug"] for p in listed] == ["clinic"] and all("client_secret" not in p for p in listed)
    bad = {"name": "X", "issuer": "ftp://example.org", "client_id": "c", "client_secret": "s", "default_role": "doctor"}
    body = assert_error(
        await client.put("/admin/sso-providers/other", json=bad, headers=configured.headers), 422,
        "FIELDS_VALIDATION_ERROR",
    )  # fmt: skip
    assert set(body["fields"]) == {"issuer", "default_role"}
    assert_error(await client.get("/auth/sso/nope/start"), 404, "NOT_FOUND")


async def test_the_client_secret_is_stored_encrypted_and_still_authenticates_us_at_the_provider(
    client, configured, provider, demo, runtime
):
    async with runtime.db.read() as session:
        [stored] = (await session.execute(text("SELECT client_secret FROM sso_providers"))).scalars().all()
    assert stored.startswith("fernet:") and provider.client_secret not in stored
    # The provider's token endpoint takes only our client secret (client_secret_basic).
    ticket = fragment(await sso_sign_in(client, provider, "anna"))["sso"]
    signed_in = await client.post("/auth/sso/redeem", json={"ticket": ticket})
    assert signed_in.status_code == 200 and signed_in.json()["user"]["id"] == demo.users["doctor1"]


async def test_an_endpoint_the_discovery_names_over_plain_http_is_never_dialled(
    client, configured, provider, demo, monkeypatch
):
    """The issuer is https, but its discovery document names the token endpoint over plain http (here a listener
    on loopback that records what reaches it): the code and the client secret would travel in clear, so the
    exchange is never sent and the sign-in is refused."""
    with recording_listener() as (clear, reached):
        monkeypatch.setitem(provider.provider.configuration_information, "token_endpoint", clear + "/token")
        refused = await sso_sign_in(client, provider, "anna")
    assert "sso-error" in fragment(refused) and "sso" not in fragment(refused)
    assert reached == []


@contextmanager
def recording_listener() -> Iterator[tuple[str, list[str]]]:
    """A plain-http listener on loopback: its base URL, and the paths requested of it."""
    reached: list[str] = []

    class Record(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            reached.append(self.path)
            self.send_response(500)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", reached
    finally:
        server.shutdown()
        server.server_close()
