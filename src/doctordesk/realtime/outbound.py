"""The address rule at connect time (docs/webhooks.md#addresses): outgoing requests to URLs that admins and API
clients chose (webhooks, FHIR Subscriptions, test events; the single sign-on provider's issuer and the endpoints
its discovery names; a SMART backend service's JWKS URL) reach public addresses only, unless the server allows
private ones (``DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES``, ``DOCTORDESK_SSO_ALLOW_PRIVATE_ADDRESSES``,
``DOCTORDESK_SMART_JWKS_ALLOW_PRIVATE_ADDRESSES``).

The registration check reads the URL; this reads what is actually dialled, so a name that resolves (now, or after
a DNS change) to a private address, and any spelling of an address, is caught. Two seams of the aiohttp connector:

- ``PublicOnlyResolver`` wraps the resolver: of every A/AAAA record it keeps the public ones, and refuses the
  name when none is left. The connector dials only what it returns, and caches only that.
- ``public_only_socket`` is the connector's socket factory: it refuses to create the socket for an address that is
  not public. aiohttp does not resolve an IP literal, so this is where a literal is checked; for names it is the
  last check before ``connect()``.

The single sign-on client is Authlib's on httpx, and a SMART key set is fetched with httpx: there the seam is
httpcore's network backend (``PublicOnlyBackend``), which resolves the name itself, keeps the public addresses and
dials only those (TLS still checks the certificate against the name); a refusal there is httpcore's
``ConnectError``, which httpx reports as its own.

A refusal is an ``OSError`` (``EACCES``) that aiohttp reports as a connection error: the delivery fails like any
unreachable endpoint, with the reason in its log. Redirects are never followed (``allow_redirects=False``), and the
session does not read proxy settings from the environment, so the address checked is the peer.

``HttpsOnlyTransport`` holds what an httpx client dials to https as well (single sign-on: every endpoint the
issuer's discovery names, not only the issuer).
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable

import httpcore
import httpx
from aiohappyeyeballs import AddrInfoType
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from doctordesk.domain.accounts.sso_issuer import issuer_problem
from doctordesk.domain.webhooks.addresses import address_of, is_public


class RefusedAddress(OSError):
    """A connection to an address that is not public was refused before it was made."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EACCES, reason)


def _public(host: str) -> bool:
    address = address_of(host)
    return address is not None and is_public(address)


class PublicOnlyResolver(AbstractResolver):
    """Resolves through ``base`` (the system's resolver by default) and keeps only public addresses."""

    def __init__(self, base: AbstractResolver | None = None) -> None:
        self._base = base if base is not None else DefaultResolver()
        self._owns_base = base is None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._base.resolve(host, port, family)
        public = [r for r in found if _public(r["host"])]
        if not public:
            seen = ", ".join(dict.fromkeys(r["host"] for r in found))
            raise RefusedAddress(f"not a public address: {host} resolves to {seen}")
        return public

    async def close(self) -> None:
        if self._owns_base:
            await self._base.close()


def public_only_socket(addr_info: AddrInfoType) -> socket.socket:
    """The socket for one address the connector is about to dial; RefusedAddress when it is not public."""
    family, kind, proto, _, sockaddr = addr_info
    if not _public(str(sockaddr[0])):
        raise RefusedAddress(f"not a public address: {sockaddr[0]}")
    return socket.socket(family=family, type=kind, proto=proto)


Resolve = Callable[[str, int], Awaitable[list[str]]]


async def _system_resolve(host: str, port: int) -> list[str]:
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class PublicOnlyBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend that dials public addresses only: it resolves the name (``resolve``: the
    system's resolver), refuses it when no public address is left, and connects ``base`` to the public ones in
    turn. A Unix socket is refused."""

    def __init__(self, base: httpcore.AsyncNetworkBackend | None = None, resolve: Resolve = _system_resolve) -> None:
        self._base = base if base is not None else httpcore.AnyIOBackend()
        self._resolve = resolve

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        literal = address_of(host)
        found = [str(literal)] if literal is not None else await self._resolve(host, port)
        public = [a for a in found if _public(a)]
        if not public:
            raise httpcore.ConnectError(f"refused: not a public address: {host} resolves to {', '.join(found) or '-'}")
        failed = httpcore.ConnectError(f"no address of {host} answered")
        for address in public:
            try:
                return await self._base.connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as error:
                failed = error
        raise failed

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ARG002
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,  # noqa: ARG002
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError(f"refused: not a public address: the Unix socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self._base.sleep(seconds)


class PublicOnlyTransport(httpx.AsyncHTTPTransport):
    """httpx's transport on ``PublicOnlyBackend``, without proxies from the environment (through a proxy the
    address dialled would be the proxy's)."""

    def __init__(self, *, verify: ssl.SSLContext, backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        super().__init__(verify=verify, trust_env=False)
        # httpx builds its httpcore pool without a way to pass the backend: the pool is made again with it.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify, network_backend=backend or PublicOnlyBackend(), max_connections=10
        )


class HttpsOnlyTransport(httpx.AsyncBaseTransport):
    """The scheme rule at dial time, beside the address rule: every URL a request dials is https (or http to
    loopback on a developer's machine, when allowed). For single sign-on, whose issuer's discovery names the keys,
    token and userinfo endpoints: a provider's document that names one of them over http must not make us send the
    code, the client secret or a token in clear."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, allow_http_loopback: bool) -> None:
        self.inner = inner
        self.allow_http_loopback = allow_http_loopback

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if issuer_problem(str(request.url), allow_http_loopback=self.allow_http_loopback) is not None:
            raise httpx.UnsupportedProtocol(f"not dialled in clear: {request.url.copy_with(query=None)}")
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
