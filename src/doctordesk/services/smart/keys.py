"""The key that signs id tokens (RS256, joserfc), kept in the database so every instance signs with the same one
and publishes it at the JWKS endpoint; made on first use (two instances racing: the oldest row wins)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from joserfc import jwt
from joserfc.jwk import RSAKey
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from doctordesk.runtime import Runtime
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartSigningKey

ALGORITHM = "RS256"
KEY_BITS = 2048


async def _stored(rt: Runtime) -> SmartSigningKey | None:
    async with rt.db.read() as session:
        return await session.scalar(select(SmartSigningKey).order_by(SmartSigningKey.id).limit(1))


async def signing_key(rt: Runtime) -> tuple[str, RSAKey]:
    """The kid and the private key that signs (made and stored when there is none yet)."""
    row = await _stored(rt)
    if row is None:
        key = RSAKey.generate_key(KEY_BITS)
        kid = key.thumbprint()
        try:
            async with unit_of_work(rt) as uow:
                session = uow.session
                session.add(
                    SmartSigningKey(
                        kid=kid, private_jwk=json.dumps(key.as_dict(private=True)), created_at=rt.clock.now()
                    )
                )
        except IntegrityError:
            pass
        row = await _stored(rt)
        assert row is not None
    return row.kid, RSAKey.import_key(json.loads(row.private_jwk))


async def key_set(rt: Runtime) -> dict[str, Any]:
    """The public keys (JWKS) clients check id tokens with."""
    kid, key = await signing_key(rt)
    public = {**key.as_dict(private=False), "kid": kid, "use": "sig", "alg": ALGORITHM}
    return {"keys": [public]}


def id_token(
    rt: Runtime,
    signer: tuple[str, RSAKey],
    *,
    issuer: str,
    subject: int,
    audience: str,
    fhir_user: str | None,
    nonce: str | None,
    lifetime: timedelta,
) -> str:
    """A signed OpenID Connect id token for ``subject`` (the user's id), for the client ``audience``; ``signer``:
    the kid and key of ``signing_key`` (read before the caller's transaction: SQLite has one writer)."""
    kid, key = signer
    now: datetime = rt.clock.now()
    claims: dict[str, Any] = {
        "iss": issuer,
        "sub": str(subject),
        "aud": audience,
        "iat": int(now.timestamp()),
        "exp": int((now + lifetime).timestamp()),
    }
    if fhir_user is not None:
        claims["fhirUser"] = fhir_user
    if nonce is not None:
        claims["nonce"] = nonce
    return jwt.encode({"alg": ALGORITHM, "kid": kid, "typ": "JWT"}, claims, key)
