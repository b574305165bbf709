"""SMART Backend Services (docs/smart.md#backend-services): a system without a user asks the token endpoint for an
access token with ``grant_type=client_credentials`` and a client assertion, a JWT signed with its own key
(``private_key_jwt``, RFC 7523): ``iss`` = ``sub`` = its client id, ``aud`` the token endpoint, ``exp`` at most
five minutes ahead, a ``jti`` never used before (kept until its ``exp``), signed RS384 or ES384 by a key of its
registered key set. The answer is a short-lived access token for the ``system/`` scopes asked, within those
registered for the service; no refresh token.

Every refusal of the assertion is ``invalid_client`` (400: the client sent no HTTP authentication to challenge);
scopes beyond the registered ones are ``invalid_scope``. The JWT handling is joserfc's."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from authlib.oauth2.rfc6749 import errors as oauth
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc7523.client import ASSERTION_TYPE
from joserfc import jws, jwt
from joserfc.errors import JoseError
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import ASSERTION_ALGORITHMS, SYSTEM_ACCESS_PREFIX, ClientKind
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.smart import jwks
from doctordesk.services.smart.authorize import MAX_CLIENT_ID_CHARS, hashed
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartAssertionJti, SmartClient, SmartSystemToken

SYSTEM_TOKEN_LIFETIME = timedelta(minutes=5)
MAX_ASSERTION_AHEAD = timedelta(minutes=5)  # an assertion's exp at most this far ahead
CLOCK_SKEW_SECONDS = 30  # allowed between the service's clock and ours (exp, iat, nbf)
MAX_ASSERTION_CHARS = 8192
MAX_JTI_CHARS = 255


@dataclass(frozen=True, slots=True)
class Assertion:
    """What the token request carries: ``client_assertion_type``, ``client_assertion`` and, optionally, the
    ``client_id`` (it must then be the assertion's issuer)."""

    assertion_type: str | None
    assertion: str | None
    client_id: str | None = None


def _refused(description: str) -> oauth.InvalidClientError:
    return oauth.InvalidClientError(description)


def _unverified_claims(assertion: str) -> tuple[str, object, dict[str, Any]]:
    """The header's ``kid`` and ``jku`` (None when absent) and the claims, read before the signature is checked (to
    find the client's keys)."""
    try:
        compact = jws.extract_compact(assertion.encode())
        claims = json.loads(compact.payload)
    except (JoseError, ValueError, TypeError) as error:
        raise _refused("The client assertion is not a signed JWT.") from error
    kid = compact.headers().get("kid")
    if not isinstance(claims, dict) or not isinstance(kid, str) or not kid:
        raise _refused("The client assertion needs a kid in its header.")
    if compact.headers().get("alg") not in ASSERTION_ALGORITHMS:
        raise _refused("Sign the client assertion with RS384 or ES384.")
    return kid, compact.headers().get("jku"), claims


async def _backend_client(rt: Runtime, client_id: object) -> SmartClient:
    if not isinstance(client_id, str) or not is_plain_text(client_id, max_chars=MAX_CLIENT_ID_CHARS):
        raise _refused("The client assertion's iss must be the client id.")
    async with rt.db.read() as session:
        client = await session.scalar(select(SmartClient).where(SmartClient.client_id == client_id))
    if client is None or not client.active or client.kind != ClientKind.BACKEND:
        raise _refused("Unknown client.")
    return client


def _check_claims(claims: dict[str, Any], client_id: str, token_endpoint: str, now: datetime) -> datetime:
    """The claims' rules; the assertion's expiry is returned (how long its jti is kept)."""
    registry = jwt.JWTClaimsRegistry(
        now=int(now.timestamp()), leeway=CLOCK_SKEW_SECONDS,
        iss={"essential": True, "value": client_id}, sub={"essential": True, "value": client_id},
        aud={"essential": True, "value": token_endpoint}, exp={"essential": True}, jti={"essential": True},
    )  # fmt: skip
    try:
        registry.validate(claims)
    except JoseError as error:
        raise _refused(f"The client assertion is refused: {error.description or error.error}.") from error
    latest = now + MAX_ASSERTION_AHEAD + timedelta(seconds=CLOCK_SKEW_SECONDS)
    if claims["exp"] > latest.timestamp():
        raise _refused("The client assertion's exp is more than five minutes ahead.")
    if not claims["jti"] or len(claims["jti"]) > MAX_JTI_CHARS:
        raise _refused("The client assertion's jti is empty or too long.")
    return datetime.fromtimestamp(int(claims["exp"]), tz=now.tzinfo)


async def authenticate(rt: Runtime, given: Assertion, *, token_endpoint: str) -> tuple[SmartClient, str, datetime]:
    """The backend service the assertion proves, its ``jti`` and when the assertion expires (the jti is not yet
    recorded: ``client_credentials`` does that with the token, in one transaction)."""
    if given.assertion_type != ASSERTION_TYPE or not given.assertion:
        raise oauth.InvalidRequestError(f"Send client_assertion_type={ASSERTION_TYPE} and a client_assertion.")
    if len(given.assertion) > MAX_ASSERTION_CHARS:
        raise _refused("The client assertion is too long.")
    kid, jku, unverified = _unverified_claims(given.assertion)
    if given.client_id is not None and given.client_id != unverified.get("iss"):
        raise _refused("client_id differs from the client assertion's iss.")
    client = await _backend_client(rt, unverified.get("iss"))
    if jku is not None and jku != client.jwks_uri:  # SMART: a jku must be the registered key set URL
        raise _refused("The client assertion's jku is not the key set URL registered for this client.")
    try:
        keys = await jwks.keys_for(rt, jwks=client.jwks, jwks_uri=client.jwks_uri, kid=kid)
    except jwks.KeysUnavailable as error:
        raise _refused("The client's key set cannot be read.") from error
    if not any(k.kid == kid for k in keys.keys):
        raise _refused("The client assertion's kid is not a key of this client.")
    try:
        token = jwt.decode(given.assertion, keys.get_by_kid(kid), algorithms=list(ASSERTION_ALGORITHMS))
    except (JoseError, ValueError) as error:
        raise _refused("The client assertion's signature does not verify.") from error
    now = rt.clock.now()
    expires = _check_claims(dict(token.claims), client.client_id, token_endpoint, now)
    return client, str(token.claims["jti"]), expires


def _granted(client: SmartClient, scope: str | None) -> str:
    wanted = list(dict.fromkeys(scope_to_list(scope or "") or []))
    if not wanted or len(scope or "") > smart_scopes.MAX_SCOPE_CHARS:
        raise oauth.InvalidScopeError("Ask for at least one system/ scope.")
    not_system = [s for s in wanted if not smart_scopes.is_system(s)]
    if not_system:
        raise oauth.InvalidScopeError(f"A backend service asks for system/ scopes only: {not_system[0]}")
    refused = smart_scopes.not_allowed(wanted, client.allowed_scopes)
    if refused:
        raise oauth.InvalidScopeError(f"Scope not allowed for this client: {refused[0]}")
    return " ".join(wanted)


async def client_credentials(
    rt: Runtime, given: Assertion, scope: str | None, *, token_endpoint: str
) -> dict[str, Any]:
    """The token endpoint's ``client_credentials`` grant for a backend service."""
    client, jti, assertion_expires = await authenticate(rt, given, token_endpoint=token_endpoint)
    granted = _granted(client, scope)
    now = rt.clock.now()
    access = SYSTEM_ACCESS_PREFIX + secrets.token_urlsafe(32)
    replayed = _refused("The client assertion was already used (its jti is not new).")
    try:
        async with unit_of_work(rt) as uow:
            await uow.session.execute(delete(SmartAssertionJti).where(SmartAssertionJti.expires_at <= now))
            seen = await uow.session.scalar(
                select(SmartAssertionJti.id).where(
                    SmartAssertionJti.client_pk == client.id, SmartAssertionJti.jti == jti
                )
            )
            if seen is not None:
                raise replayed
            uow.session.add(SmartAssertionJti(client_pk=client.id, jti=jti, expires_at=assertion_expires))
            uow.session.add(
                SmartSystemToken(
                    token_hash=hashed(access), client_pk=client.id, scope=granted, created_at=now,
                    expires_at=now + SYSTEM_TOKEN_LIFETIME,
                )
            )  # fmt: skip
            audit(
                uow.session, at=now, actor_id=None, action="smart.system-token", entity="smart_client",
                entity_id=client.id, details={"client_id": client.client_id, "scope": granted},
            )  # fmt: skip
    except IntegrityError as error:  # the same jti, recorded at the same moment by another request
        raise replayed from error
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(SYSTEM_TOKEN_LIFETIME.total_seconds()),
        "scope": granted,
    }
