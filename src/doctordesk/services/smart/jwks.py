"""A backend service's public keys (docs/smart.md#backend-services): given inline at registration, or fetched from
its JWKS URL and kept for ``DOCTORDESK_SMART_JWKS_CACHE_SECONDS``. A key id the cached set does not know fetches the
set again (at most every ``REFETCH_SECONDS``: the service may have rotated its key).

The URL is dialled through the outbound address rule (``realtime/outbound.PublicOnlyTransport``: every address
actually dialled must be public, as for the single sign-on provider) unless
``DOCTORDESK_SMART_JWKS_ALLOW_PRIVATE_ADDRESSES`` is on. No redirects, no proxies from the environment, at most
``MAX_JWKS_BYTES`` read."""

from __future__ import annotations

import json
import logging
import ssl
from dataclasses import dataclass
from typing import Any

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey

from doctordesk.domain.smart.clients import MAX_JWKS_KEYS
from doctordesk.realtime import outbound
from doctordesk.runtime import Runtime

log = logging.getLogger(__name__)

CACHE_NAME = "smart-jwks"
MAX_JWKS_BYTES = 64 * 1024
REFETCH_SECONDS = 30.0
FETCH_TIMEOUT_SECONDS = 5.0
# The curve of ES384; RSA keys of at least 2048 bits (SMART Backend Services: RS384 and ES384).
EC_CURVE = "P-384"
MIN_RSA_BITS = 2048


class KeysUnavailable(Exception):
    """The service's key set cannot be had (not reachable, refused by the address rule, or not a key set)."""


@dataclass(frozen=True, slots=True)
class _Fetched:
    keys: KeySet
    at: float  # when it was fetched: Unix seconds of the injected clock


def key_set(raw: Any) -> KeySet:
    """The public keys of a JWKS document: RSA (2048 bits or more) or EC P-384 keys, each with a ``kid``, none with
    a private part. ValueError naming what is wrong."""
    if not isinstance(raw, dict) or not isinstance(raw.get("keys"), list) or not raw["keys"]:
        raise ValueError("a JWKS is an object with a non-empty list of keys")
    keys = raw["keys"]
    if len(keys) > MAX_JWKS_KEYS:
        raise ValueError(f"at most {MAX_JWKS_KEYS} keys")
    kids: set[str] = set()
    for key in keys:
        if not isinstance(key, dict) or key.get("kty") not in ("RSA", "EC"):
            raise ValueError("each key is an RSA or EC key")
        if "d" in key or "p" in key:
            raise ValueError("a private key was given: give the public key only")
        kid = key.get("kid")
        if not isinstance(kid, str) or not kid or len(kid) > 255 or kid in kids:
            raise ValueError("each key needs a kid of its own")
        kids.add(kid)
        if key["kty"] == "EC" and key.get("crv") != EC_CURVE:
            raise ValueError("an EC key is on P-384 (ES384)")
    try:
        imported = KeySet.import_key_set({"keys": keys})
    except (JoseError, ValueError, TypeError) as error:
        raise ValueError("not a valid key set") from error
    for found in imported.keys:
        if isinstance(found, RSAKey) and found.raw_value.key_size < MIN_RSA_BITS:
            raise ValueError(f"an RSA key has at least {MIN_RSA_BITS} bits")
        if not isinstance(found, RSAKey | ECKey):
            raise ValueError("each key is an RSA or EC key")
    return imported


def key_ids(raw: Any) -> tuple[str, ...]:
    keys = raw.get("keys", []) if isinstance(raw, dict) else []
    return tuple(str(k.get("kid")) for k in keys if isinstance(k, dict))


async def _fetch(rt: Runtime, url: str) -> KeySet:
    verify = ssl.create_default_context()
    transport = None if rt.settings.smart_jwks_allow_private_addresses else outbound.PublicOnlyTransport(verify=verify)
    try:
        async with (
            httpx.AsyncClient(
                transport=transport, verify=verify, timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=False,
                trust_env=False,
            ) as http,
            http.stream("GET", url, headers={"Accept": "application/json"}) as answer,
        ):  # fmt: skip
            if answer.status_code != 200:
                raise KeysUnavailable(f"the JWKS URL answered {answer.status_code}")
            body = b""
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > MAX_JWKS_BYTES:
                    raise KeysUnavailable("the key set is too large")
        return key_set(json.loads(body))
    except (httpx.HTTPError, OSError) as error:
        raise KeysUnavailable(f"the JWKS URL could not be read: {error}") from error
    except ValueError as error:
        raise KeysUnavailable(f"the JWKS URL holds no valid key set: {error}") from error


def _knows(keys: KeySet, kid: str) -> bool:
    return any(k.kid == kid for k in keys.keys)


async def keys_for(rt: Runtime, *, jwks: dict[str, Any] | None, jwks_uri: str | None, kid: str) -> KeySet:
    """The key set to check an assertion signed with the key ``kid`` against (KeysUnavailable when there is none)."""
    if jwks is not None:
        try:
            return key_set(jwks)
        except ValueError as error:
            raise KeysUnavailable(str(error)) from error
    if not jwks_uri:
        raise KeysUnavailable("the service has no keys registered")
    cache: dict[str, _Fetched] = rt.caches.setdefault(CACHE_NAME, {})
    cached, now = cache.get(jwks_uri), rt.wall()
    if cached is not None and now - cached.at < rt.settings.smart_jwks_cache_seconds:
        if _knows(cached.keys, kid) or now - cached.at < REFETCH_SECONDS:
            return cached.keys
    try:
        fetched = await _fetch(rt, jwks_uri)
    except KeysUnavailable:
        log.warning("a backend service's key set could not be fetched from %s", jwks_uri, exc_info=True)
        raise
    cache[jwks_uri] = _Fetched(fetched, now)
    return fetched
