"""The authorization endpoint and the consent it leads to (docs/smart.md#launch): an app's request is checked
(client, redirect URI, PKCE S256, scopes, audience) and kept as a ticket for the consent page; a signed-in user
allows it (a staff user picking the patient for a patient launch) or denies it, and the app's redirect URI gets a
one-time code or ``access_denied``.

Until the client and its redirect URI are known good, an error is answered here (never redirected: RFC 6749
4.1.2.1); after that, errors go back to the app's redirect URI with its ``state``."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import errors as oauth
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc7636.challenge import CODE_CHALLENGE_PATTERN
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.domain.smart.clients import ClientKind
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.smart import launches
from doctordesk.services.uow import unit_of_work
from doctordesk.store.smart_tables import SmartAuthorization, SmartClient

TICKET_LIFETIME = timedelta(minutes=10)  # from the authorize request to the user's decision
CODE_LIFETIME = timedelta(seconds=60)  # from the decision to the code's redemption
MAX_STATE_CHARS = 2000
MAX_NONCE_CHARS = 255
MAX_CLIENT_ID_CHARS = 64
CONSENT_PAGE = "/profile/smart/authorize"
GONE = N_("This sign-in request has expired or was already answered. Start again from the app.")


def hashed(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class AuthorizeParams:
    """The authorization request's query parameters, as sent (None: absent)."""

    response_type: str | None
    client_id: str | None
    redirect_uri: str | None
    scope: str | None
    state: str | None
    aud: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    nonce: str | None = None
    launch: str | None = None  # an EHR launch's value (docs/smart.md#ehr-launch)


async def _client(rt: Runtime, client_id: str | None) -> SmartClient:
    if not client_id:
        raise oauth.InvalidRequestError("client_id is required.")
    if not is_plain_text(client_id, max_chars=MAX_CLIENT_ID_CHARS):
        raise oauth.InvalidClientError("Unknown client.")
    async with rt.db.read() as session:
        client = await session.scalar(select(SmartClient).where(SmartClient.client_id == client_id))
    if client is None or not client.active or client.kind == ClientKind.BACKEND:
        raise oauth.InvalidClientError("Unknown client.")
    return client


def _checked_scopes(p: AuthorizeParams, client: SmartClient) -> list[str]:
    wanted = list(dict.fromkeys(scope_to_list(p.scope or "") or []))
    if not wanted or len(p.scope or "") > smart_scopes.MAX_SCOPE_CHARS:
        raise oauth.InvalidScopeError("Ask for at least one scope.")
    unknown = smart_scopes.unknown(wanted)
    if unknown:
        raise oauth.InvalidScopeError(f"Unknown scope: {unknown[0]}")
    refused = smart_scopes.not_allowed(wanted, client.allowed_scopes)
    if refused:
        raise oauth.InvalidScopeError(f"Scope not allowed for this client: {refused[0]}")
    return wanted


def _check_request(p: AuthorizeParams, fhir_base: str) -> None:
    if p.response_type != "code":
        raise oauth.UnsupportedResponseTypeError("Only response_type=code is supported.")
    if p.code_challenge_method != "S256" or not CODE_CHALLENGE_PATTERN.fullmatch(p.code_challenge or ""):
        raise oauth.InvalidRequestError("PKCE is required: code_challenge with code_challenge_method=S256.")
    if p.aud is None or p.aud.rstrip("/") != fhir_base:
        raise oauth.InvalidRequestError("aud must name this FHIR server.")
    if not is_plain_text(p.state or "", max_chars=MAX_STATE_CHARS) or not is_plain_text(
        p.nonce or "", max_chars=MAX_NONCE_CHARS
    ):
        raise oauth.InvalidRequestError("state or nonce is too long or holds control characters.")


async def start(rt: Runtime, params: AuthorizeParams, *, fhir_base: str) -> str:
    """Check an authorization request and keep it for the consent page; the page's address (in the web app) is
    returned. Raises an Authlib ``OAuth2Error``: with ``redirect_uri`` set when it goes back to the app."""
    client = await _client(rt, params.client_id)
    if not params.redirect_uri or params.redirect_uri not in client.redirect_uris:
        raise oauth.InvalidRequestError("redirect_uri is not registered for this client.")
    ticket = secrets.token_urlsafe(24)
    now = rt.clock.now()
    try:
        _check_request(params, fhir_base)
        wanted = _checked_scopes(params, client)
        if (smart_scopes.LAUNCH in wanted) != bool(params.launch):
            raise oauth.InvalidRequestError("An EHR launch sends its launch value with the launch scope.")
        async with unit_of_work(rt) as uow:
            session = uow.session
            # The launch's patient (its value spent here), or none: the user's decision sets it.
            patient = await launches.redeem(session, rt, params.launch, client) if params.launch else None
            session.add(
                SmartAuthorization(
                    ticket_hash=hashed(ticket), client_pk=client.id, redirect_uri=params.redirect_uri,
                    scope=" ".join(wanted), state=params.state, nonce=params.nonce,
                    code_challenge=params.code_challenge or "",
                    created_at=now, expires_at=now + TICKET_LIFETIME, patient_id=patient,
                )
            )  # fmt: skip
    except oauth.OAuth2Error as refused:
        refused.redirect_uri, refused.state = params.redirect_uri, params.state
        raise
    return f"/#{CONSENT_PAGE}/{ticket}"


@dataclass(frozen=True, slots=True)
class Pending:
    """What the consent page shows: the app, the scopes asked, whether a patient must be picked."""

    client_name: str
    scopes: tuple[str, ...]
    pick_patient: bool


async def _pending(session: AsyncSession, rt: Runtime, ticket: str) -> tuple[SmartAuthorization, SmartClient]:
    row = (
        await session.execute(
            select(SmartAuthorization, SmartClient)
            .join(SmartClient, SmartClient.id == SmartAuthorization.client_pk)
            .where(SmartAuthorization.ticket_hash == hashed(ticket))
        )
    ).first()
    if row is None or row[0].decided_at is not None or row[0].expires_at <= rt.clock.now() or not row[1].active:
        raise NotFound(GONE)
    return row[0], row[1]


def picks_patient(actor: Actor, scopes: list[str]) -> bool:
    """A staff user launching with a patient scope chooses the patient; a patient is their own."""
    return actor.role is not Role.PATIENT and smart_scopes.needs_patient(scopes)


async def pending(rt: Runtime, actor: Actor, ticket: str) -> Pending:
    """The request behind ``ticket`` as ``actor`` sees it (404 when unknown, expired or answered)."""
    async with rt.db.read() as session:
        authorization, client = await _pending(session, rt, ticket)
    wanted = authorization.scope.split()
    launched = authorization.patient_id is not None  # an EHR launch named the patient
    return Pending(client.name, tuple(wanted), picks_patient(actor, wanted) and not launched)


def _patient_for(actor: Actor, wanted: list[str], picked: int | None, visible: set[int]) -> int | None:
    if not smart_scopes.needs_patient(wanted):
        return None
    if actor.role is Role.PATIENT:
        if actor.patient_id is None:
            raise ValidationFailed(fields={"patient": N_("Your account has no patient record.")})
        return actor.patient_id
    if picked is None or picked not in visible:
        raise ValidationFailed(fields={"patient": N_("Choose a patient.")})
    return picked


async def decide(rt: Runtime, actor: Actor, ticket: str, *, allow: bool, patient: int | None, visible: set[int]) -> str:
    """The user's answer: the app's redirect URI with a one-time code (allowed) or ``access_denied``, and the
    ``state`` it sent. ``visible``: the patients a staff user may pick (their own rights)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        authorization, client = await _pending(uow.session, rt, ticket)
        wanted = authorization.scope.split()
        authorization.decided_at, authorization.user_id = now, actor.user_id
        params: list[tuple[str, str]]
        if allow:
            if authorization.patient_id is None:  # an EHR launch's patient is kept
                authorization.patient_id = _patient_for(actor, wanted, patient, visible)
            elif actor.role is Role.PATIENT and actor.patient_id != authorization.patient_id:
                raise ValidationFailed(fields={"patient": N_("This launch is for another patient.")})
            authorization.granted_scope = authorization.scope
            code = secrets.token_urlsafe(32)
            authorization.code_hash, authorization.expires_at = hashed(code), now + CODE_LIFETIME
            params = [("code", code)]
        else:
            params = [("error", "access_denied"), ("error_description", "The user denied the request.")]
        audit(
            uow.session, at=now, actor_id=actor.user_id, action="smart.consent" if allow else "smart.consent-denied",
            entity="smart_client", entity_id=client.id,
            details={"client_id": client.client_id, "scope": authorization.scope, "patient": authorization.patient_id},
        )  # fmt: skip
    if authorization.state is not None:
        params.append(("state", authorization.state))
    return str(add_params_to_uri(authorization.redirect_uri, params))
