"""The address rule at connect time (docs/webhooks.md#addresses): outgoing requests to URLs that admins and API
clients chose (webhooks, FHIR Subscriptions, test events) reach public addresses only, unless the server allows
private ones (``DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES``).

The registration check reads the URL; this reads what is actually dialled, so a name that resolves (now, or after
a DNS change) to a private address, and any spelling of an address, is caught. Two seams of the aiohttp connector:

- ``PublicOnlyResolver`` wraps the resolver: of every A/AAAA record it keeps the public ones, and refuses the
  name when none is left. The connector dials only what it returns, and caches only that.
- ``public_only_socket`` is the connector's socket factory: it refuses to create the socket for an address that is
  not public. aiohttp does not resolve an IP literal, so this is where a literal is checked; for names it is the
  last check before ``connect()``.

A refusal is an ``OSError`` (``EACCES``) that aiohttp reports as a connection error: the delivery fails like any
unreachable endpoint, with the reason in its log. Redirects are never followed (``allow_redirects=False``), and the
session does not read proxy settings from the environment, so the address checked is the peer.
"""

from __future__ import annotations

import errno
import socket

from aiohappyeyeballs import AddrInfoType
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

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
