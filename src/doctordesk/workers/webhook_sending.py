"""Sending one webhook delivery: the dispatcher's HTTP client (aiohttp, the address rule on every address dialled)
and one signed request, read down to its outcome."""

from __future__ import annotations

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver

from doctordesk import __version__
from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.realtime import outbound
from doctordesk.realtime.push import retry_after
from doctordesk.services.webhooks.outbox import Due
from doctordesk.workers.webhook_signing import signed_headers

# An attempt's status code (None: no answer), error (None: delivered) and the delay the endpoint asked for.
Outcome = tuple[int | None, str | None, float | None]
ANSWER_BYTES = 64 * 1024  # read at most this much of an answer (its body is not used)


class WebhookSender:
    """Sends deliveries, each signed at the moment it goes out, over one HTTP client made at the first send."""

    def __init__(self, *, settings: Settings, wall: Clock, resolver: AbstractResolver | None) -> None:
        self.settings = settings
        # ``wall`` stamps the signature, which receivers check against their own clock (they refuse timestamps
        # more than a few minutes off).
        self.wall = wall
        # How names are resolved (the system's resolver unless given: tests give one that answers for any name).
        # Unless private addresses are allowed, it is wrapped to keep public addresses only.
        self._resolver = resolver
        self._checking: outbound.PublicOnlyResolver | None = None
        self._http: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            s = self.settings
            resolver, socket_factory = self._resolver, None
            if not s.webhook_allow_private_addresses:
                # The address rule where it matters: on every address dialled (realtime/outbound.py).
                resolver = self._checking = outbound.PublicOnlyResolver(self._resolver)
                socket_factory = outbound.public_only_socket
            connector = aiohttp.TCPConnector(
                # Our own bounds decide how many requests are in flight, per endpoint and overall.
                limit=s.webhook_concurrency,
                limit_per_host=0,
                ttl_dns_cache=60,
                # The trust of the service's other clients: certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR.
                ssl=httpx.create_ssl_context(),
                resolver=resolver,
                socket_factory=socket_factory,
            )
            self._http = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=s.webhook_timeout_seconds),
                headers={"user-agent": f"doctordesk-webhooks/{__version__}"},
                # The delivery says its content type (none for an empty notification).
                skip_auto_headers=("content-type",),
                auto_decompress=False,
            )
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._checking is not None:
            await self._checking.close()
            self._checking = None

    async def send(self, due: Due) -> Outcome:
        """Status code (None: no answer), error text, and the delay the endpoint asked for."""
        try:
            async with self._client().request(
                due.method,
                due.url,
                data=due.payload.encode() if due.payload else None,
                headers=signed_headers(due, at=self.wall.now()),
                allow_redirects=False,
            ) as response:
                code = response.status
                # Read the (unused) answer so the connection can serve the next request; a long one is cut off
                # and its connection closed.
                read = 0
                while read < ANSWER_BYTES and (chunk := await response.content.readany()):
                    read += len(chunk)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return None, f"{type(exc).__name__}: {exc}"[:300], None
        if 200 <= code < 300:
            return code, None, None
        asked = retry_after(response) if code in (429, 503) else None
        return code, f"HTTP {code}", asked
