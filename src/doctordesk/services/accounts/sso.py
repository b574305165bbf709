"""Single sign-on through the clinic's OpenID Connect provider (docs/accounts.md#single-sign-on).

The relying party is Authlib's: discovery, the authorization URL with PKCE (S256) and a nonce, the code exchange
and the ID token's signature and claims (issuer, audience, expiry, nonce) are its work. What is ours: the request
in flight is a single-use ticket whose value is the ``state`` (and a cookie binds it to the browser that started
it), the claims find or create the user, and the sign-in ends in a single-use hand-off the web app redeems for
an ordinary access token.
"""

from __future__ import annotations

import json
import logging
import ssl
import warnings
from dataclasses import dataclass
from typing import Any

with warnings.catch_warnings():
    # Authlib 1.9 announces at import that its httpx integration moves to a successor package: nothing to do here.
    # Its own module installs an "always" filter first, which the ignore below then overrides (this block only).
    import authlib.deprecate  # noqa: F401

    warnings.simplefilter("ignore", DeprecationWarning)
    from authlib.integrations.starlette_client import OAuth
import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts import sso_claims
from doctordesk.domain.accounts.sso_issuer import issuer_problem
from doctordesk.domain.accounts.user_agents import SessionDevice
from doctordesk.domain.errors import Forbidden, NotFound, Unauthorized
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.realtime import outbound
from doctordesk.runtime import Runtime
from doctordesk.services.accounts import tickets
from doctordesk.services.accounts.sessions import issue_token
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mfa_tables import SsoLink, SsoProvider
from doctordesk.store.tables import User

log = logging.getLogger(__name__)

STATE_TTL_SECONDS = 600
HANDOFF_TTL_SECONDS = 60
SCOPE = "openid email profile"
# A password hash no password matches: users made by single sign-on sign in through their provider only.
NO_PASSWORD = "!sso"
# Failures of the provider's side that end a sign-in with a message, never a 500.
_PROVIDER_ERRORS = (OSError, httpx.HTTPError, ValueError, KeyError, TypeError, RuntimeError)


@dataclass(frozen=True, slots=True)
class Started:
    url: str
    state: str


def _verify(rt: Runtime) -> ssl.SSLContext:
    """How the provider's certificate is checked: against the configured CAs, or the system's."""
    ca = rt.settings.sso_ca_file
    return ssl.create_default_context(cafile=str(ca)) if ca else ssl.create_default_context()


def _client(rt: Runtime, provider: SsoProvider) -> Any:
    verify = _verify(rt)
    inner: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport(verify=verify)
    if not rt.settings.sso_allow_private_addresses:
        # Every address dialled (the issuer's, and whatever its discovery names) is checked (realtime/outbound.py).
        inner = outbound.PublicOnlyTransport(verify=verify)
    transport = outbound.HttpsOnlyTransport(inner, allow_http_loopback=rt.settings.sso_allow_http_loopback)
    connection: dict[str, Any] = {"transport": transport}
    oauth = OAuth()
    return oauth.register(
        name=f"sso-{provider.id}",
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        server_metadata_url=provider.issuer.rstrip("/") + "/.well-known/openid-configuration",
        client_kwargs={"scope": SCOPE, "code_challenge_method": "S256", "timeout": 10, **connection},
    )


async def _provider(session: AsyncSession, slug: str) -> SsoProvider:
    provider = await session.scalar(select(SsoProvider).where(SsoProvider.slug == slug))
    if provider is None or not provider.active:
        raise NotFound()
    return provider


async def listed(rt: Runtime) -> list[dict[str, str]]:
    """The active providers, for the login page's "Sign in with …" buttons."""
    async with rt.db.read() as session:
        rows = await session.scalars(select(SsoProvider).where(SsoProvider.active.is_(True)).order_by(SsoProvider.id))
        return [{"slug": p.slug, "name": p.name} for p in rows]


async def start(rt: Runtime, slug: str, *, redirect_uri: str) -> Started:
    """The provider's authorization URL for a new sign-in, and its state (also the ticket that remembers the
    PKCE verifier and nonce)."""
    now = rt.clock.now()
    async with rt.db.read() as session:
        provider = await _provider(session, slug)
    if issuer_problem(provider.issuer, allow_http_loopback=rt.settings.sso_allow_http_loopback) is not None:
        # Saved before issuers had to be https: never dialled in clear (an admin saves it again with https://).
        log.warning("the OpenID provider %s is not dialled: its issuer is not https", provider.issuer)
        raise Unauthorized(N_("The sign-in service cannot be reached. Try again later."))
    client = _client(rt, provider)
    async with unit_of_work(rt) as uow:
        session = uow.session
        state = tickets.issue(session, tickets.SSO_STATE, now=now, ttl_seconds=STATE_TTL_SECONDS)
        claims = sso_claims.requested_claims(provider.match_claim, provider.role_claim)
        try:
            made = await client.create_authorization_url(redirect_uri, state=state, claims=json.dumps(claims))
        except _PROVIDER_ERRORS as error:
            log.warning("the OpenID provider %s could not be reached", provider.issuer, exc_info=True)
            raise Unauthorized(N_("The sign-in service cannot be reached. Try again later.")) from error
        row = await tickets.peek(session, tickets.SSO_STATE, state, now=now)
        assert row is not None
        data = {"provider": provider.id, "nonce": made["nonce"], "verifier": made["code_verifier"]}
        row.data = {**data, "redirect_uri": redirect_uri}
    return Started(url=made["url"], state=state)


async def finish(rt: Runtime, slug: str, *, state: str, code: str) -> str:
    """Exchange the provider's code, check the ID token, find or create the user: a hand-off ticket the web app
    redeems for an access token. Unauthorized for a state that is unknown, used, expired or another provider's,
    or a refused token; Forbidden when the claims name nobody allowed in."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        flow = await tickets.take(session, tickets.SSO_STATE, state, now=now)
        provider = await _provider(session, slug)
    if flow is None or flow.data.get("provider") != provider.id:
        raise Unauthorized(N_("This sign-in expired. Start again."))
    claims = await _claims(rt, provider, flow.data, code)
    async with unit_of_work(rt) as uow:
        session = uow.session
        user = await _user_for(session, provider, claims, now=now)
        handoff = tickets.issue(session, tickets.SSO_HANDOFF, now=now, ttl_seconds=HANDOFF_TTL_SECONDS, user_id=user.id)
        audit(session, at=now, actor_id=user.id, action="login-sso", entity="user", entity_id=user.id,
              details={"provider": provider.slug, "subject": claims["sub"]})  # fmt: skip
    return handoff


async def _claims(rt: Runtime, provider: SsoProvider, flow: dict[str, Any], code: str) -> dict[str, Any]:
    """The ID token's claims (checked by Authlib) with the userinfo endpoint's for the same subject."""
    client = _client(rt, provider)
    try:
        token = await client.fetch_access_token(
            redirect_uri=flow["redirect_uri"], code=code, code_verifier=flow["verifier"]
        )
        id_claims = dict(await client.parse_id_token(token, nonce=flow["nonce"]))
        extra = dict(await client.userinfo(token=token))
    except Exception as error:  # Authlib's and the transport's errors alike: the sign-in is refused, not a 500
        log.warning("single sign-on through %s was refused: %s", provider.issuer, error)
        raise Unauthorized(N_("The sign-in service did not confirm this sign-in.")) from error
    if extra.get("sub") != id_claims.get("sub"):
        raise Unauthorized(N_("The sign-in service did not confirm this sign-in."))
    return {**extra, **id_claims}


async def _user_for(session: AsyncSession, provider: SsoProvider, claims: dict[str, Any], *, now: Any) -> User:
    subject = str(claims["sub"])
    linked = await session.scalar(
        select(User)
        .join(SsoLink, SsoLink.user_id == User.id)
        .where(SsoLink.provider_id == provider.id, SsoLink.subject == subject)
    )
    user = linked or await _match(session, provider, claims)
    if user is None:
        user = await _create(session, provider, claims, now=now)
    if not user.active:
        raise Forbidden(N_("This account is deactivated."))
    if linked is None:
        session.add(SsoLink(provider_id=provider.id, subject=subject, user_id=user.id, created_at=now))
    return user


async def _match(session: AsyncSession, provider: SsoProvider, claims: dict[str, Any]) -> User | None:
    value = sso_claims.match_value(claims, provider.match_claim)
    if value is None:
        return None
    column = User.external_id if provider.match_field == "external_id" else User.username
    wanted = value if provider.match_field == "external_id" else value.lower()
    return await session.scalar(select(User).where(column == wanted))


async def _create(session: AsyncSession, provider: SsoProvider, claims: dict[str, Any], *, now: Any) -> User:
    role = sso_claims.mapped_role(claims, provider.role_claim, provider.role_map, provider.default_role)
    username = sso_claims.new_username(claims, provider.match_claim)
    if not provider.create_users or role is None or username is None:
        raise Forbidden(N_("Your account at the sign-in service has no access to doctordesk."))
    if await session.scalar(select(User.id).where(User.username == username)) is not None:
        raise Forbidden(N_("Your account at the sign-in service has no access to doctordesk."))
    user = User(
        username=username,
        password_hash=NO_PASSWORD,
        role=role.value,
        display_name=sso_claims.display_name(claims, username),
        active=True,
        created_at=now,
    )
    session.add(user)
    await session.flush()
    audit(session, at=now, actor_id=user.id, action="user-created-by-sso", entity="user", entity_id=user.id,
          details={"provider": provider.slug, "role": role.value})  # fmt: skip
    return user


async def redeem(rt: Runtime, ticket: str, *, device: SessionDevice | None) -> tuple[str, Actor]:
    """The access token for a hand-off (once; Unauthorized when unknown, used or expired). ``device``: what
    redeems it (domain/accounts/user_agents.py)."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await tickets.take(session, tickets.SSO_HANDOFF, ticket, now=now)
        user = await session.get(User, row.user_id) if row is not None and row.user_id else None
        if user is None or not user.active:
            raise Unauthorized()
        # The provider's sign-in is trusted as it is, its own factors included (docs/accounts.md#single-sign-on).
        token, actor = await issue_token(
            session, user, now=now, ttl_seconds=rt.settings.token_ttl_seconds, second_factor=True, device=device
        )
        audit(session, at=now, actor_id=user.id, action="login", entity="user", entity_id=user.id,
              details={"sso": True})  # fmt: skip
    return token, actor
