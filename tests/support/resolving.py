"""A resolver for the tests' outgoing requests: answers from its own table, as /etc/hosts or a DNS server would
(a public-looking name that resolves to loopback, the local names), and asks the system's resolver for the rest.
Given to the webhook dispatcher as its base resolver: the address rule is checked on what this answers."""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

LOCAL_HOSTS: dict[str, list[str]] = {
    "localhost": ["127.0.0.1"],
    "localhost.localdomain": ["127.0.0.1"],
    "ip6-localhost": ["::1"],
    "ip6-loopback": ["::1"],
}


class TableResolver(AbstractResolver):
    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = {**LOCAL_HOSTS, **(table or {})}
        self.asked: list[str] = []
        self._system = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        addresses = self.table.get(host.lower().removesuffix("."))
        if addresses is None:
            return await self._system.resolve(host, port, family)
        return [
            ResolveResult(
                hostname=host,
                host=a,
                port=port,
                family=socket.AF_INET6 if ipaddress.ip_address(a).version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for a in addresses
        ]

    async def close(self) -> None:
        await self._system.close()
