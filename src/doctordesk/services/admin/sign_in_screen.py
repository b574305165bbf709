"""The administration screen for signing in (screens/admin/sign_in.py): its page, saving the second-factor policy
and resetting a user's factors, each audited by the account services it calls."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import sign_in as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import mfa, sso_admin
from doctordesk.services.screen_base import acted, form_flag, require_admin, viewing


def sign_in(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        return screen.render(
            required=await mfa.read_policy(rt),
            users=await mfa.enrolled_users(rt),
            providers=await sso_admin.listing(rt),
            layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )

    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id)


async def save_policy(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Save the ticks: an unticked role (its checkbox sends ``false``) no longer needs a second factor."""
    require_admin(actor)
    fields: dict[str, str] = {}
    required = {}
    for role in Role:
        value = form_flag(form, f"required~{role.value}", fields)
        if value is not None:
            required[role] = value
    if fields:
        raise ValidationFailed(fields=fields)
    await mfa.set_policy(rt, actor, required)
    return await acted(rt, page, state, "saved", N_("Saved."))


async def reset(rt: Runtime, actor: Actor, user_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    require_admin(actor)
    await mfa.reset(rt, actor, user_id)
    return await acted(rt, page, state, "saved", Text("Reset the second factors of user {id}.", id=user_id))
