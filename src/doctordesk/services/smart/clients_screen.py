"""The SMART apps administration screen (``screens/admin/smart_apps.py``): its page, registering an app and
deactivating or reactivating one, each through ``services/smart/clients.py`` (the same checks and audit as the
JSON API); a confidential app's secret is shown on the registration's answer only, never on a page."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.domain.smart.clients import ClientKind
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import smart_apps as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin.screen_base import acted, form_text, require_admin, viewing
from doctordesk.services.smart import clients


def list_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        rows = await clients.list_clients(rt, actor)
        return screen.render(rows, layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id)


async def create(rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None) -> UpdateSet:
    """Register an app from the form; the secret of a confidential one is on this answer only."""
    require_admin(actor)
    fields: dict[str, str] = {}
    name = form_text(form, "name", max_chars=clients.MAX_NAME, fields=fields) or ""
    uris = (form_text(form, "redirect_uris", max_chars=5000, fields=fields) or "").split()
    scopes = (form_text(form, "allowed_scopes", max_chars=2000, fields=fields) or "").split()
    kind = form.get("kind", ClientKind.PUBLIC.value)
    if kind not in {k.value for k in ClientKind}:
        fields["kind"] = N_("Use public or confidential.")
    if fields:
        raise ValidationFailed(fields=fields)
    new = await clients.register(rt, actor, name=name, kind=ClientKind(kind), redirect_uris=uris, allowed_scopes=scopes)
    if new.secret is not None:
        text = Text(
            "Registered {app}, client id {id}. Client secret: {secret} — shown this once; give it to the app.",
            app=new.info.name, id=new.info.client_id, secret=new.secret,
        )  # fmt: skip
    else:
        text = Text("Registered {app}, client id {id}.", app=new.info.name, id=new.info.client_id)
    update = await acted(rt, page, state, "created", text)
    update.patches += [p_update(ref, value="") for ref in ("new-name", "new-redirect-uris", "new-scopes")]
    return update


async def set_active(
    rt: Runtime, actor: Actor, app_id: int, *, active: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    await clients.set_active(rt, actor, app_id, active=active)
    return await acted(rt, page, state, "saved", N_("Reactivated.") if active else N_("Deactivated."))
