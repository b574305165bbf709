"""The administration screen for the clinic's settings (screens/admin/clinic.py): its page and saving its form,
through the settings store (services/clinic/settings.py), which audits the change."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import clinic as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.viewing import Viewing
from doctordesk.services.clinic import settings
from doctordesk.services.screen_base import acted, require_admin, viewing


def clinic_settings(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        return screen.render(await settings.read(rt), layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id)


async def save(rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None) -> UpdateSet:
    """Save the form: the settings it sends (others keep theirs); a refused field keeps the form as typed."""
    require_admin(actor)
    changes = {name: form[name].strip() for name in settings.SETTINGS if name in form}
    await settings.update(rt, actor, changes)
    return await acted(rt, page, state, "saved", N_("Saved."))
