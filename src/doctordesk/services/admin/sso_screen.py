"""The single sign-on administration screen (``screens/admin/sso.py``): its page, and adding, changing and deleting
a provider, each through ``services/accounts/sso_admin.py`` (the same checks and audit as the JSON API)."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import sso as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import sso_admin
from doctordesk.services.screen_base import acted, form_flag, require_admin, viewing


def sso_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        return screen.render(await sso_admin.listing(rt), layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(
        rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id,
        shows_clinic=False,
    )  # fmt: skip


def _role_map(raw: str, fields: dict[str, str]) -> dict[str, str]:
    """``value=role`` pairs separated by commas; a pair without ``=`` is refused (the values and roles are judged
    by ``sso_admin``)."""
    found: dict[str, str] = {}
    for pair in (p.strip() for p in raw.split(",")):
        if not pair:
            continue
        claim, equals, role = pair.partition("=")
        if not equals or not claim.strip() or not role.strip():
            fields["role_map"] = N_("Write each as value=role, separated by commas (e.g. staff=support).")
            return {}
        found[claim.strip()] = role.strip()
    return found


def config_of(form: Mapping[str, str]) -> sso_admin.ProviderConfig:
    """A provider's form as the service's configuration; an empty optional field is not set."""
    fields: dict[str, str] = {}
    text = {name: form.get(name, "").strip() for name in ("name", "issuer", "client_id", "match_claim", "role_claim")}
    secret = form.get("client_secret", "")
    role_map = _role_map(form.get("role_map", ""), fields)
    create_users = form_flag(form, "create_users", fields)
    active = form_flag(form, "active", fields)
    if fields:
        raise ValidationFailed(fields=fields)
    return sso_admin.ProviderConfig(
        name=text["name"], issuer=text["issuer"], client_id=text["client_id"], client_secret=secret or None,
        match_claim=text["match_claim"] or "email", match_field=form.get("match_field") or "username",
        role_claim=text["role_claim"] or None, role_map=role_map, default_role=form.get("default_role") or None,
        create_users=bool(create_users), active=True if active is None else active,
    )  # fmt: skip


async def create(rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None) -> UpdateSet:
    """Add a provider under the slug the form names (an existing slug is refused: change it in its own form)."""
    require_admin(actor)
    slug = form.get("slug", "").strip()
    problem = sso_admin.slug_problem(slug)
    if problem is None and any(p["slug"] == slug for p in await sso_admin.listing(rt)):
        problem = N_("A provider with this name exists already.")
    if problem is not None:
        raise ValidationFailed(fields={"slug": problem})
    saved = await sso_admin.save(rt, actor, slug, config_of(form))
    update = await acted(rt, page, state, "saved", Text("Added {name}.", name=saved["name"]))
    blank = (
        "new-slug",
        "new-name",
        "new-issuer",
        "new-client-id",
        "new-client-secret",
        "new-role-claim",
        "new-role-map",
    )
    update.patches += [p_update(ref, value="") for ref in blank]
    return update


async def save(
    rt: Runtime, actor: Actor, slug: str, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Change a provider (an unknown slug is 404: the screen never creates through this door)."""
    require_admin(actor)
    saved = await sso_admin.save(rt, actor, slug, config_of(form), create=False)
    return await acted(rt, page, state, "saved", Text("Saved {name}.", name=saved["name"]))


async def delete(rt: Runtime, actor: Actor, slug: str, *, page: Viewing, state: str | None) -> UpdateSet:
    require_admin(actor)
    await sso_admin.remove(rt, actor, slug)
    return await acted(rt, page, state, "saved", Text("Deleted the provider {slug}.", slug=slug))
