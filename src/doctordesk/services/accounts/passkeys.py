"""Passkeys (WebAuthn, through the ``webauthn`` package): register one while signed in (or while enrolling), and
sign in with one instead of the password and the code (docs/accounts.md#passkeys).

A passkey sign-in asks the authenticator to verify the user (PIN or biometrics), so it stands for both factors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.authentication.verify_authentication_response import VerifiedAuthentication
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from doctordesk.domain.accounts.user_agents import SessionDevice
from doctordesk.domain.errors import Unauthorized, ValidationFailed
from doctordesk.domain.names import name_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import mfa, tickets
from doctordesk.services.accounts.sessions import issue_token, stamp
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mfa_tables import Passkey
from doctordesk.store.tables import User

CHALLENGE_TTL_SECONDS = 300
RP_NAME = "doctordesk"
MAX_CREDENTIAL_CHARS = 16_384
MAX_NAME = 64  # a passkey's name, to tell one's passkeys apart
_BAD_RESPONSE = (WebAuthnException, ValueError, KeyError, TypeError)


@dataclass(frozen=True, slots=True)
class RelyingParty:
    """Who the browser must have talked to: the host name (RP ID) and the origin of the web app."""

    rp_id: str
    origin: str


NOT_A_PASSKEY = N_("Not a passkey response: send the credential's toJSON() object (or that object as a JSON string).")


def read_credential(value: object) -> dict[str, Any] | None:
    """The browser's credential: the object a PublicKeyCredential's ``toJSON()`` gives, or that object written as
    a JSON string (both at most ``MAX_CREDENTIAL_CHARS`` as JSON text); None when it is neither."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if len(value) <= MAX_CREDENTIAL_CHARS else None
        except ValueError:
            value = None
    elif isinstance(value, dict) and len(json.dumps(value)) > MAX_CREDENTIAL_CHARS:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return None
    return value


def _credential(raw: object) -> dict[str, Any]:
    """The credential, or a 422 naming ``credential`` with the one whole message."""
    value = read_credential(raw)
    if value is None:
        raise ValidationFailed(fields={"credential": NOT_A_PASSKEY})
    return value


async def registration_options(rt: Runtime, who: mfa.Enrolling, rp: RelyingParty) -> tuple[str, dict[str, Any]]:
    """A challenge to create a passkey for the user: ``(ticket, publicKey options)``; the user's own passkeys are
    excluded (an authenticator holds one per account)."""
    now = rt.clock.now()
    user = who.actor
    async with unit_of_work(rt) as uow:
        session = uow.session
        ids = list(await session.scalars(select(Passkey.credential_id).where(Passkey.user_id == user.user_id)))
        options = generate_registration_options(
            rp_id=rp.rp_id,
            rp_name=RP_NAME,
            user_id=str(user.user_id).encode(),
            user_name=user.username,
            user_display_name=user.display_name,
            exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(i)) for i in ids],
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
        )
        data = {"challenge": bytes_to_base64url(options.challenge), "purpose": "register", "rp_id": rp.rp_id}
        ticket = tickets.issue(
            session, tickets.WEBAUTHN, now=now, ttl_seconds=CHALLENGE_TTL_SECONDS, user_id=user.user_id, data=data
        )
    return ticket, json.loads(options_to_json(options))


async def register(
    rt: Runtime, who: mfa.Enrolling, rp: RelyingParty, *, ticket: str, credential: object, name: str = ""
) -> tuple[int, list[str]]:
    """Keep the passkey the browser created for the ticket's challenge under ``name`` (at most ``MAX_NAME``
    characters that show something; none: "Passkey" in the request's language): its id and, when it is the user's
    first factor, their new recovery codes (shown once)."""
    name = name.strip()
    if name:  # a passkey's name is held to the names' rule (one that shows nothing tells nothing apart)
        problem = name_problem(name, max_chars=MAX_NAME)
        if problem is not None:
            raise ValidationFailed(fields={"name": problem})
    body = _credential(credential)
    now = rt.clock.now()
    user_id = who.actor.user_id
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await tickets.take(session, tickets.WEBAUTHN, ticket, now=now)
        if row is None or row.user_id != user_id or row.data.get("purpose") != "register":
            raise ValidationFailed(fields={"ticket": N_("The request expired. Try again.")})
        try:
            verified = verify_registration_response(
                credential=body,
                expected_challenge=base64url_to_bytes(row.data["challenge"]),
                expected_origin=rp.origin,
                expected_rp_id=rp.rp_id,
                require_user_verification=True,
            )
        except _BAD_RESPONSE as error:
            raise ValidationFailed(fields={"credential": N_("The passkey could not be verified.")}) from error
        key = Passkey(
            user_id=user_id,
            credential_id=bytes_to_base64url(verified.credential_id),
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            name=name or _("Passkey"),  # in the language of the request that added it
            created_at=now,
        )
        session.add(key)
        await session.flush()
        audit(session, at=now, actor_id=user_id, action="mfa-passkey-added", entity="user", entity_id=user_id,
              details={"passkey": key.id})  # fmt: skip
        if who.ticket is None:  # the session now holds the factor it just proved
            await stamp(session, who.actor.token_id, now=None, second_factor=True)
        codes = await mfa.ensure_recovery_codes(session, user_id, now=now)
        return key.id, codes


async def sign_in_options(rt: Runtime, rp: RelyingParty) -> tuple[str, dict[str, Any]]:
    """A challenge for signing in with any passkey of this site (the browser offers the user's own)."""
    now = rt.clock.now()
    options = generate_authentication_options(rp_id=rp.rp_id, user_verification=UserVerificationRequirement.REQUIRED)
    data = {"challenge": bytes_to_base64url(options.challenge), "purpose": "sign-in", "rp_id": rp.rp_id}
    async with unit_of_work(rt) as uow:
        session = uow.session
        ticket = tickets.issue(session, tickets.WEBAUTHN, now=now, ttl_seconds=CHALLENGE_TTL_SECONDS, data=data)
    return ticket, json.loads(options_to_json(options))


async def _assertion(
    session: AsyncSession, rp: RelyingParty, *, ticket: str, body: dict[str, Any], now: datetime
) -> tuple[Passkey | None, User | None, VerifiedAuthentication | None]:
    """The passkey named by an assertion, its user, and the verified assertion when it answers the ticket's sign-in
    challenge with a right signature for an active user (else None); the ticket is used up either way."""
    row = await tickets.take(session, tickets.WEBAUTHN, ticket, now=now)
    key = await session.scalar(select(Passkey).where(Passkey.credential_id == body["id"]).with_for_update())
    user = await session.get(User, key.user_id) if key is not None else None
    if row is None or row.data.get("purpose") != "sign-in" or key is None or user is None or not user.active:
        return key, user, None
    try:
        verified = verify_authentication_response(
            credential=body,
            expected_challenge=base64url_to_bytes(row.data["challenge"]),
            expected_rp_id=rp.rp_id,
            expected_origin=rp.origin,
            credential_public_key=key.public_key,
            credential_current_sign_count=key.sign_count,
            require_user_verification=True,
        )
    except _BAD_RESPONSE:
        return key, user, None
    key.sign_count, key.last_used_at = verified.new_sign_count, now
    return key, user, verified


async def sign_in(
    rt: Runtime, rp: RelyingParty, *, ticket: str, credential: object, device: SessionDevice | None
) -> tuple[str, Any]:
    """A new access token for the passkey's user when the assertion answers the ticket's challenge (401 for an
    unknown passkey, a wrong signature or a used challenge); audited as a login either way. ``device``: what signs
    in (domain/accounts/user_agents.py)."""
    body = _credential(credential)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        key, user, verified = await _assertion(session, rp, ticket=ticket, body=body, now=now)
        user_id = user.id if user is not None else None
        if verified is None or key is None or user is None:
            audit(session, at=now, actor_id=user_id, action="login-failed", entity="user", entity_id=user_id,
                  details={"reason": "passkey"})  # fmt: skip
        else:
            token, actor = await issue_token(
                session, user, now=now, ttl_seconds=rt.settings.token_ttl_seconds, second_factor=True, device=device
            )
            audit(session, at=now, actor_id=user.id, action="login", entity="user", entity_id=user.id,
                  details={"passkey": key.id})  # fmt: skip
    if verified is None:
        raise Unauthorized(N_("This passkey could not sign you in."))
    return token, actor


async def reauthenticate(rt: Runtime, actor: Actor, rp: RelyingParty, *, ticket: str, credential: object) -> None:
    """Re-authenticate the signed-in ``actor`` with one of their own passkeys (a challenge from
    ``sign_in_options``): both factors, as a passkey sign-in. Anything else is a 422 naming ``credential``."""
    body = _credential(credential)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        key, user, verified = await _assertion(session, rp, ticket=ticket, body=body, now=now)
        if verified is not None and key is not None and user is not None and user.id == actor.user_id:
            await stamp(session, actor.token_id, now=now, second_factor=True)
            audit(session, at=now, actor_id=actor.user_id, action="reauthenticated", entity="user",
                  entity_id=actor.user_id, details={"passkey": key.id})  # fmt: skip
            return
        audit(session, at=now, actor_id=actor.user_id, action="reauthentication-failed", entity="user",
              entity_id=actor.user_id, details={"reason": "passkey"})  # fmt: skip
    raise ValidationFailed(fields={"credential": N_("This passkey could not confirm it is you.")})
