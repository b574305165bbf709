"""A real OpenID Connect provider for the single sign-on tests: pyop (discovery, authorization codes, PKCE, signed
ID tokens, client authentication, userinfo) served over HTTP on a loopback port.

What is written here is only pyop's HTTP plumbing and the provider's own sign-in form (a provider asks its user
for a password; ours keeps a few users in memory). Every protocol decision is pyop's.
"""

from __future__ import annotations

import html
import ipaddress
import json
import secrets
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from Cryptodome.PublicKey import RSA
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from jwkest.jwk import RSAKey
from pyop.authz_state import AuthorizationState
from pyop.exceptions import InvalidAuthenticationRequest, OAuthError
from pyop.provider import Provider
from pyop.subject_identifier import HashBasedSubjectIdentifierFactory
from pyop.userinfo import Userinfo


@dataclass
class OpenIDProvider:
    issuer: str
    client_id: str
    client_secret: str
    users: dict[str, dict[str, Any]]
    passwords: dict[str, str]
    ca_file: Path
    provider: Provider = field(repr=False)
    pending: dict[str, str] = field(default_factory=dict)  # form id -> the authorization request's query


def _provider(issuer: str, client_id: str, secret: str, redirect_uris: list[str], users: dict[str, Any]) -> Provider:
    key = RSAKey(key=RSA.generate(2048), alg="RS256", kid="op-key-1")
    configuration = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "userinfo_endpoint": f"{issuer}/userinfo",
        "jwks_uri": f"{issuer}/jwks",
        "scopes_supported": ["openid", "email", "profile"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "claims_parameter_supported": True,
        "code_challenge_methods_supported": ["S256"],
    }
    clients = {
        client_id: {
            "client_secret": secret,
            "redirect_uris": redirect_uris,
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_basic",
        }
    }
    state = AuthorizationState(HashBasedSubjectIdentifierFactory(secrets.token_hex(8)))
    return Provider(key, configuration, state, clients, Userinfo(users))


def _handler(op: OpenIDProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

        def _send(self, status: int, body: str, content_type: str = "application/json", **headers: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> str:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/.well-known/openid-configuration":
                self._send(200, op.provider.provider_configuration.to_json())
            elif url.path == "/jwks":
                self._send(200, json.dumps(op.provider.jwks))
            elif url.path == "/authorize":
                self._authorize_form(url.query)
            elif url.path == "/userinfo":
                self._userinfo(url.query)
            else:
                self._send(404, "{}")

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/token":
                try:
                    answer = op.provider.handle_token_request(self._body(), dict(self.headers))
                    self._send(200, answer.to_json())
                except OAuthError as error:
                    self._send(400, json.dumps({"error": error.oauth_error, "error_description": str(error)}))
            elif url.path == "/login":
                self._login(parse_qs(self._body()))
            elif url.path == "/userinfo":
                self._userinfo(self._body())
            else:
                self._send(404, "{}")

        def _authorize_form(self, query: str) -> None:
            try:
                op.provider.parse_authentication_request(query, dict(self.headers))
            except InvalidAuthenticationRequest as error:
                self._send(400, json.dumps({"error": "invalid_request", "error_description": str(error)}))
                return
            form = secrets.token_urlsafe(12)
            op.pending[form] = query
            page = (
                '<!doctype html><title>Clinic sign-in</title><form method="post" action="/login">'
                f'<input type="hidden" name="form" value="{html.escape(form)}">'
                '<label>User <input name="username" id="op-username"></label>'
                '<label>Password <input name="password" type="password" id="op-password"></label>'
                '<button id="op-submit">Continue</button></form>'
            )
            self._send(200, page, "text/html; charset=utf-8")

        def _login(self, form: dict[str, list[str]]) -> None:
            query = op.pending.pop((form.get("form") or [""])[0], None)
            username = (form.get("username") or [""])[0]
            if query is None or op.passwords.get(username) != (form.get("password") or [""])[0]:
                self._send(401, "wrong user or password", "text/plain")
                return
            request = op.provider.parse_authentication_request(query, dict(self.headers))
            answer = op.provider.authorize(request, username)
            self._send(302, "", "text/plain", Location=answer.request(request["redirect_uri"], False))

        def _userinfo(self, query: str) -> None:
            try:
                answer = op.provider.handle_userinfo_request(query, dict(self.headers))
                self._send(200, answer.to_json())
            except OAuthError as error:
                self._send(401, json.dumps({"error": "invalid_token", "error_description": str(error)}))

    return Handler


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files in ``directory``): OpenID requires an HTTPS issuer."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openid-provider.test")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "op-cert.pem", directory / "op-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@contextmanager
def running_provider(
    directory: Path, *, redirect_uris: list[str], users: dict[str, dict[str, Any]], passwords: dict[str, str]
) -> Iterator[OpenIDProvider]:
    """A provider on a free loopback port, over HTTPS with a self-signed certificate (``op.ca_file``: trust it),
    with one registered client (``client_id``/``client_secret``)."""
    cert_file, key_file = self_signed(directory)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert_file, key_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    issuer = f"https://127.0.0.1:{server.server_address[1]}"
    client_id, secret = "doctordesk", secrets.token_urlsafe(16)
    op = OpenIDProvider(
        issuer=issuer,
        client_id=client_id,
        client_secret=secret,
        users=users,
        passwords=passwords,
        ca_file=cert_file,
        provider=_provider(issuer, client_id, secret, redirect_uris, users),
    )
    server.RequestHandlerClass = _handler(op)
    thread = threading.Thread(target=server.serve_forever, name="openid-provider", daemon=True)
    thread.start()
    try:
        yield op
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def sign_in_at_provider(http: Any, authorize_url: str, username: str, password: str) -> str:
    """Follow a user through the provider's form (``http``: a sync httpx client): the redirect back to the relying
    party, with the code."""
    form_page = http.get(authorize_url)
    assert form_page.status_code == 200, form_page.text
    form_id = form_page.text.split('name="form" value="')[1].split('"')[0]
    issuer = f"{urlsplit(authorize_url).scheme}://{urlsplit(authorize_url).netloc}"
    answer = http.post(
        f"{issuer}/login",
        content=urlencode({"form": form_id, "username": username, "password": password}),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 302, answer.text
    return str(answer.headers["location"])
