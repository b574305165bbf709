"""The token endpoint and revocation (docs/smart.md#tokens): a code redeemed once with its PKCE verifier, refresh
tokens rotated on every use (a rotated one used again revokes the whole grant), revocation (RFC 7009). Errors are
Authlib's OAuth 2 errors, answered in OAuth 2's JSON shape by the router."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from authlib.oauth2.rfc6749 import errors as oauth
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc7636.challenge import CODE_VERIFIER_PATTERN, create_s256_code_challenge
from joserfc.jwk import RSAKey
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.login_throttle import address_key
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.roles import Role
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import (
    ACCESS_PREFIX,
    REFRESH_PREFIX,
    SECRET_DIGEST,
    ClientKind,
    secret_digest,
    secret_matches,
)
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import login_throttle
from doctordesk.services.audit.entries import audit
from doctordesk.services.smart import backend, keys
from doctordesk.services.smart.authorize import MAX_CLIENT_ID_CHARS, hashed
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartAuthorization, SmartClient, SmartToken
from doctordesk.store.tables import Patient, User

ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)
ACCESS, REFRESH = "access", "refresh"
# Client ids counted by the login throttle stand beside usernames, which cannot contain ':'.
THROTTLE_PREFIX = "client:"
MAX_SECRET_CHARS = 256  # secrets are 48 characters; longer ones are not hashed to find out


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """Who the app says it is: ``client_id`` and, for a confidential app, its secret (from HTTP Basic or the form);
    ``basic``: they came as HTTP Basic (a refusal then answers 401 with a challenge)."""

    client_id: str | None
    secret: str | None
    basic: bool = False
    # The client's address as the login throttle counts it (the peer, or what a trusted proxy saw).
    address: str | None = None


@dataclass(frozen=True, slots=True)
class TokenParams:
    grant_type: str | None
    code: str | None = None
    redirect_uri: str | None = None
    code_verifier: str | None = None
    refresh_token: str | None = None
    scope: str | None = None
    client_assertion_type: str | None = None
    client_assertion: str | None = None


@dataclass(frozen=True, slots=True)
class Issuer:
    """Where the tokens are for: the server's base URL (the id token's issuer) and the FHIR base; ``signer``: the
    id token's key (``keys.signing_key``)."""

    base_url: str
    fhir_base: str
    signer: tuple[str, RSAKey] | None = None


def _bad_client(creds: ClientCredentials) -> oauth.InvalidClientError:
    refused = oauth.InvalidClientError("Client authentication failed.")
    if creds.basic:
        refused.status_code = 401
    return refused


async def authenticate_client(rt: Runtime, passwords: Passwords, creds: ClientCredentials) -> SmartClient:
    """The app, authenticated: a public app by its id, a confidential one by its secret too. Every secret tried is
    counted by the login throttle, per client id and address and per client id (docs/smart.md#client-secrets):
    429 with Retry-After beyond its limits, before any hash is computed."""
    if not creds.client_id or not is_plain_text(creds.client_id, max_chars=MAX_CLIENT_ID_CHARS):
        raise _bad_client(creds)
    if creds.secret is not None and len(creds.secret) > MAX_SECRET_CHARS:
        raise _bad_client(creds)
    now = rt.clock.now()
    counted = creds.secret is not None
    name, place = THROTTLE_PREFIX + creds.client_id[: 64 - len(THROTTLE_PREFIX)], address_key(creds.address)
    async with unit_of_work(rt) as uow:
        session = uow.session
        if counted:
            limits = login_throttle.limits(rt.settings)
            await login_throttle.admit(session, limits, username=name, address=place, now=now)
        client = await session.scalar(select(SmartClient).where(SmartClient.client_id == creds.client_id))
    if client is None or not client.active:
        raise _bad_client(creds)
    if client.kind == ClientKind.PUBLIC:
        if creds.secret is not None:
            raise _bad_client(creds)
        return client
    if creds.secret is None or client.secret_hash is None:
        raise _bad_client(creds)
    fast = secret_matches(client.secret_hash, creds.secret)
    # A secret registered before the fast digest: its argon2 hash is checked once more, then replaced.
    legacy = not fast and not client.secret_hash.startswith(SECRET_DIGEST)
    if not fast and not (legacy and await passwords.verify(client.secret_hash, creds.secret)):
        raise _bad_client(creds)
    async with unit_of_work(rt) as uow:
        session = uow.session
        await login_throttle.succeeded(session, username=name, address=place, now=now)
        if legacy:
            await session.execute(
                update(SmartClient).where(SmartClient.id == client.id).values(secret_hash=secret_digest(creds.secret))
            )
    return client


async def revoke_family(session: AsyncSession, family: int, now: datetime) -> None:
    """Revoke every access and refresh token of one grant (one consent and its refreshes)."""
    await session.execute(
        update(SmartToken).where(SmartToken.family == family, SmartToken.revoked_at.is_(None)).values(revoked_at=now)
    )


def _new_token(
    session: AsyncSession, kind: str, grant: SmartToken | SmartAuthorization, scope: str, now: datetime
) -> str:
    prefix, lifetime = (ACCESS_PREFIX, ACCESS_LIFETIME) if kind == ACCESS else (REFRESH_PREFIX, REFRESH_LIFETIME)
    token = prefix + secrets.token_urlsafe(32)
    family = grant.family if isinstance(grant, SmartToken) else grant.id
    assert grant.user_id is not None
    session.add(
        SmartToken(
            token_hash=hashed(token), kind=kind, family=family, client_pk=grant.client_pk, user_id=grant.user_id,
            patient_id=grant.patient_id, scope=scope, created_at=now, expires_at=now + lifetime,
        )
    )  # fmt: skip
    return token


async def _user_active(session: AsyncSession, user_id: int | None) -> bool:
    return bool(user_id is not None and await session.scalar(select(User.active).where(User.id == user_id)))


async def _fhir_user(session: AsyncSession, user_id: int, fhir_base: str) -> str | None:
    """The FHIR resource that is the user: their Patient, or a doctor's Practitioner (other staff have none)."""
    user = await session.get(User, user_id)
    if user is None:
        return None
    if user.role == Role.PATIENT:
        patient = await session.scalar(select(Patient.id).where(Patient.user_id == user_id))
        return f"{fhir_base}/Patient/{patient}" if patient is not None else None
    return f"{fhir_base}/Practitioner/{user_id}" if user.role == Role.DOCTOR else None


async def _answer(
    rt: Runtime,
    session: AsyncSession,
    grant: SmartToken | SmartAuthorization,
    *,
    scope: str,
    client: SmartClient,
    issuer: Issuer,
    nonce: str | None,
) -> dict[str, Any]:
    now = rt.clock.now()
    granted = scope.split()
    body: dict[str, Any] = {
        "access_token": _new_token(session, ACCESS, grant, scope, now),
        "token_type": "Bearer",
        "expires_in": int(ACCESS_LIFETIME.total_seconds()),
        "scope": scope,
    }
    if smart_scopes.wants_refresh(granted):
        body["refresh_token"] = _new_token(session, REFRESH, grant, scope, now)
    if grant.patient_id is not None:
        body["patient"] = str(grant.patient_id)
        body["need_patient_banner"] = True
    if smart_scopes.OPENID in granted and grant.user_id is not None:
        fhir_user = await _fhir_user(session, grant.user_id, issuer.fhir_base)
        assert issuer.signer is not None
        body["id_token"] = keys.id_token(
            rt, issuer.signer, issuer=issuer.base_url, subject=grant.user_id, audience=client.client_id,
            fhir_user=fhir_user if smart_scopes.FHIR_USER in granted else None, nonce=nonce, lifetime=ACCESS_LIFETIME,
        )  # fmt: skip
    return body


async def _by_code(rt: Runtime, p: TokenParams, client: SmartClient, issuer: Issuer) -> dict[str, Any]:
    if not p.code or not p.redirect_uri or not p.code_verifier:
        raise oauth.InvalidRequestError("code, redirect_uri and code_verifier are required.")
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        grant = await uow.session.scalar(
            select(SmartAuthorization).where(SmartAuthorization.code_hash == hashed(p.code)).with_for_update()
        )
        if grant is None or grant.client_pk != client.id:
            raise oauth.InvalidGrantError("Unknown code.")
        if grant.used_at is not None:
            # A code used twice: whatever the first use got is revoked too (RFC 6749 4.1.2).
            await revoke_family(uow.session, grant.id, now)
            refused: oauth.OAuth2Error = oauth.InvalidGrantError("The code was already used.")
        elif grant.expires_at <= now:
            refused = oauth.InvalidGrantError("The code has expired.")
        elif grant.redirect_uri != p.redirect_uri:
            refused = oauth.InvalidGrantError("redirect_uri differs from the authorization request's.")
        elif not CODE_VERIFIER_PATTERN.fullmatch(p.code_verifier) or not hmac.compare_digest(
            create_s256_code_challenge(p.code_verifier), grant.code_challenge
        ):
            refused = oauth.InvalidGrantError("The code_verifier does not match the code_challenge.")
        elif not await _user_active(uow.session, grant.user_id):
            refused = oauth.InvalidGrantError("The user's account is deactivated.")
        else:
            grant.used_at = now
            audit(
                uow.session, at=now, actor_id=grant.user_id, action="smart.token", entity="smart_client",
                entity_id=client.id, details={"client_id": client.client_id, "scope": grant.granted_scope},
            )  # fmt: skip
            return await _answer(
                rt, uow.session, grant, scope=grant.granted_scope or "", client=client, issuer=issuer,
                nonce=grant.nonce,
            )  # fmt: skip
    raise refused


async def _by_refresh(rt: Runtime, p: TokenParams, client: SmartClient, issuer: Issuer) -> dict[str, Any]:
    if not p.refresh_token:
        raise oauth.InvalidRequestError("refresh_token is required.")
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        old = await uow.session.scalar(
            select(SmartToken)
            .where(SmartToken.token_hash == hashed(p.refresh_token), SmartToken.kind == REFRESH)
            .with_for_update()
        )
        if old is None or old.client_pk != client.id:
            raise oauth.InvalidGrantError("Unknown refresh token.")
        if old.rotated_at is not None or old.revoked_at is not None:
            # A rotated refresh token used again: someone holds a copy; the whole grant ends.
            await revoke_family(uow.session, old.family, now)
            audit(
                uow.session, at=now, actor_id=old.user_id, action="smart.refresh-reused", entity="smart_client",
                entity_id=client.id, details={"client_id": client.client_id},
            )  # fmt: skip
            refused: oauth.OAuth2Error = oauth.InvalidGrantError("The refresh token is no longer valid.")
        elif old.expires_at <= now:
            refused = oauth.InvalidGrantError("The refresh token has expired.")
        elif not await _user_active(uow.session, old.user_id):
            refused = oauth.InvalidGrantError("The user's account is deactivated.")
        else:
            scope = old.scope
            if p.scope:
                narrower = scope_to_list(p.scope) or []
                if not set(narrower) <= set(old.scope.split()):
                    raise oauth.InvalidScopeError("A refresh may only narrow the granted scopes.")
                scope = " ".join(narrower)
            old.rotated_at = now
            return await _answer(rt, uow.session, old, scope=scope, client=client, issuer=issuer, nonce=None)
    raise refused


async def token(
    rt: Runtime, passwords: Passwords, creds: ClientCredentials, params: TokenParams, *, issuer: Issuer
) -> dict[str, Any]:
    """The token endpoint: ``authorization_code`` or ``refresh_token``, or ``client_credentials`` for a backend
    service (``services/smart/backend.py``)."""
    if params.grant_type == "client_credentials":
        if creds.secret is not None or creds.basic:
            raise oauth.InvalidRequestError("A backend service authenticates with its client_assertion only.")
        given = backend.Assertion(params.client_assertion_type, params.client_assertion, creds.client_id)
        return await backend.client_credentials(
            rt, given, params.scope, token_endpoint=issuer.base_url + "/oauth/token"
        )
    if params.grant_type not in ("authorization_code", "refresh_token"):
        raise oauth.UnsupportedGrantTypeError("Use authorization_code, refresh_token or client_credentials.")
    client = await authenticate_client(rt, passwords, creds)
    if smart_scopes.OPENID in client.allowed_scopes:
        issuer = replace(issuer, signer=await keys.signing_key(rt))
    if params.grant_type == "authorization_code":
        return await _by_code(rt, params, client, issuer)
    return await _by_refresh(rt, params, client, issuer)


async def revoke(rt: Runtime, passwords: Passwords, creds: ClientCredentials, token_value: str | None) -> None:
    """Revoke an access token, or a refresh token with its whole grant (RFC 7009: an unknown token, or another
    app's, is answered the same, with nothing revoked)."""
    if not token_value:
        raise oauth.InvalidRequestError("token is required.")
    client = await authenticate_client(rt, passwords, creds)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        row = await uow.session.scalar(select(SmartToken).where(SmartToken.token_hash == hashed(token_value)))
        if row is None or row.client_pk != client.id:
            return
        if row.kind == REFRESH:
            await revoke_family(uow.session, row.family, now)
        elif row.revoked_at is None:
            row.revoked_at = now
        audit(
            uow.session, at=now, actor_id=row.user_id, action="smart.revoke", entity="smart_client",
            entity_id=client.id, details={"client_id": client.client_id, "kind": row.kind},
        )  # fmt: skip
