"""An admin configures the clinic's OpenID Connect providers (docs/accounts.md#single-sign-on); audited, the
client secret never shown again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from doctordesk.domain.accounts.sso_claims import CREATABLE
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.domain.webhooks.rules import check_url
from doctordesk.runtime import Runtime
from doctordesk.services.audit import audit
from doctordesk.store.mfa_tables import SsoProvider


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


def provider_json(p: SsoProvider) -> dict[str, Any]:
    return {
        "slug": p.slug, "name": p.name, "issuer": p.issuer, "client_id": p.client_id,
        "match_claim": p.match_claim, "match_field": p.match_field, "role_claim": p.role_claim,
        "role_map": p.role_map, "default_role": p.default_role, "create_users": p.create_users, "active": p.active,
    }  # fmt: skip


def _check(config: ProviderConfig, *, new: bool, allow_private: bool) -> None:
    fields: dict[str, str] = {}
    if not config.issuer.startswith(("https://", "http://")):
        fields["issuer"] = N_("The provider's issuer URL (https://…).")
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


async def save(rt: Runtime, admin: Actor, slug: str, config: ProviderConfig) -> dict[str, Any]:
    """Create or change the provider ``slug``."""
    now = rt.clock.now()
    async with rt.db.transaction() as session:
        row = await session.scalar(select(SsoProvider).where(SsoProvider.slug == slug).with_for_update())
        _check(config, new=row is None, allow_private=rt.settings.sso_allow_private_addresses)
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
    async with rt.db.transaction() as session:
        row = await session.scalar(select(SsoProvider).where(SsoProvider.slug == slug))
        if row is None:
            raise NotFound()
        await session.delete(row)
        audit(session, at=now, actor_id=admin.user_id, action="sso-provider-removed", entity="sso_provider",
              entity_id=row.id, details={"slug": slug})  # fmt: skip
