"""An admin configures the clinic's OpenID Connect providers (docs/accounts.md#single-sign-on); audited, the
client secret never shown again."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from doctordesk.domain.accounts.sso_claims import CREATABLE
from doctordesk.domain.accounts.sso_issuer import issuer_problem
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.webhooks.rules import check_url
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mfa_tables import SsoProvider

# The limits of a provider's fields: the JSON API states them in its schema (web/routers/admin/sign_in.py) and
# ``_check`` judges them for every door (the admin screen's form too).
MAX_SLUG = 32
SLUG_PATTERN = r"^[a-z0-9-]+$"
MAX_NAME = 64
MIN_ISSUER, MAX_ISSUER = 8, 255
MAX_CLIENT = 255
MAX_CLAIM = 64
CLAIM_PATTERN = r"^[A-Za-z0-9_.:-]+$"
MAX_ROLE_MAP = 50
MATCH_FIELDS = ("username", "external_id")
_SLUG = re.compile(SLUG_PATTERN)
_CLAIM = re.compile(CLAIM_PATTERN)


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    name: str
    issuer: str
    client_id: str
    client_secret: str | None  # None: keep the stored one
    match_claim: str = "email"
    match_field: str = "username"
    role_claim: str | None = None
    role_map: dict[str, str] = field(default_factory=dict)
    default_role: str | None = None
    create_users: bool = False
    active: bool = True


def provider_json(provider: SsoProvider) -> dict[str, Any]:
    return {
        "slug": provider.slug, "name": provider.name, "issuer": provider.issuer, "client_id": provider.client_id,
        "match_claim": provider.match_claim, "match_field": provider.match_field, "role_claim": provider.role_claim,
        "role_map": provider.role_map, "default_role": provider.default_role, "create_users": provider.create_users,
        "active": provider.active,
    }  # fmt: skip


def slug_problem(slug: str) -> str | None:
    if not slug or len(slug) > MAX_SLUG or not _SLUG.fullmatch(slug):
        return Text("1 to {count} of a-z, 0-9 and -.", count=MAX_SLUG)
    return None


def _check_texts(config: ProviderConfig, fields: dict[str, str]) -> None:
    """Lengths, claim names and the match field (the JSON API's schema states the same limits)."""
    for name, value, most in (("name", config.name, MAX_NAME), ("client_id", config.client_id, MAX_CLIENT),
                              ("client_secret", config.client_secret or "", MAX_CLIENT)):  # fmt: skip
        problem = text_problem(value, max_chars=most)
        if problem:
            fields[name] = problem
    if not config.name.strip():
        fields["name"] = N_("Required.")
    if not config.client_id.strip():
        fields["client_id"] = N_("Required.")
    if not MIN_ISSUER <= len(config.issuer) <= MAX_ISSUER:
        fields["issuer"] = Text("{low} to {high} characters.", low=MIN_ISSUER, high=MAX_ISSUER)
    claims = [("match_claim", config.match_claim), ("role_claim", config.role_claim or "x")]
    claims += [("role_map", claim) for claim in config.role_map]
    for name, claim in claims:
        if len(claim) > MAX_CLAIM or not _CLAIM.fullmatch(claim):
            fields[name] = Text("A claim name: 1 to {count} of A-Z, a-z, 0-9 and _ . : -", count=MAX_CLAIM)
    if len(config.role_map) > MAX_ROLE_MAP:
        fields["role_map"] = Text("At most {count} entries.", count=MAX_ROLE_MAP)
    if config.match_field not in MATCH_FIELDS:
        fields["match_field"] = N_("username or external_id.")


def _check(config: ProviderConfig, *, new: bool, allow_private: bool, allow_http_loopback: bool) -> None:
    fields: dict[str, str] = {}
    _check_texts(config, fields)
    scheme_problem = issuer_problem(config.issuer, allow_http_loopback=allow_http_loopback)
    if "issuer" in fields:
        pass
    elif scheme_problem is not None:
        fields["issuer"] = scheme_problem
    else:
        try:  # the early refusal of a private or local host; every address dialled is checked too (sso.py)
            check_url(config.issuer, allow_private=allow_private)
        except ValidationFailed as refused:
            fields["issuer"] = refused.fields["url"]
    if new and not config.client_secret:
        fields["client_secret"] = N_("Required.")
    creatable = {r.value for r in CREATABLE}
    if any(role not in creatable for role in config.role_map.values()):
        fields["role_map"] = N_("Map to support or admin: doctors and patients are created by an admin.")
    if config.default_role is not None and config.default_role not in creatable:
        fields["default_role"] = N_("Map to support or admin: doctors and patients are created by an admin.")
    if fields:
        raise ValidationFailed(fields=fields)


async def save(rt: Runtime, admin: Actor, slug: str, config: ProviderConfig, *, create: bool = True) -> dict[str, Any]:
    """Create or change the provider ``slug`` (``create`` False: change only; NotFound when there is none)."""
    problem = slug_problem(slug)
    if problem:
        raise ValidationFailed(fields={"slug": problem})
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.scalar(select(SsoProvider).where(SsoProvider.slug == slug).with_for_update())
        _check(
            config, new=row is None, allow_private=rt.settings.sso_allow_private_addresses,
            allow_http_loopback=rt.settings.sso_allow_http_loopback,
        )  # fmt: skip
        if row is None and not create:
            raise NotFound()
        if row is None:
            row = SsoProvider(slug=slug, created_at=now)
            session.add(row)
        row.name, row.issuer, row.client_id = config.name, config.issuer.rstrip("/"), config.client_id
        if config.client_secret:
            row.client_secret = config.client_secret
        row.match_claim, row.match_field, row.role_claim = config.match_claim, config.match_field, config.role_claim
        row.role_map, row.default_role = dict(config.role_map), config.default_role
        row.create_users, row.active, row.updated_at = config.create_users, config.active, now
        await session.flush()
        shown = provider_json(row)
        audit(session, at=now, actor_id=admin.user_id, action="sso-provider-saved", entity="sso_provider",
              entity_id=row.id, details=shown)  # fmt: skip
    return shown


async def listing(rt: Runtime) -> list[dict[str, Any]]:
    async with rt.db.read() as session:
        return [provider_json(p) for p in await session.scalars(select(SsoProvider).order_by(SsoProvider.id))]


async def remove(rt: Runtime, admin: Actor, slug: str) -> None:
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        row = await session.scalar(select(SsoProvider).where(SsoProvider.slug == slug))
        if row is None:
            raise NotFound()
        await session.delete(row)
        audit(session, at=now, actor_id=admin.user_id, action="sso-provider-removed", entity="sso_provider",
              entity_id=row.id, details={"slug": slug})  # fmt: skip
