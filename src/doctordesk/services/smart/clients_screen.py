"""The SMART apps administration screen (``screens/admin/smart_apps.py``): its page, registering an app and
deactivating or reactivating one, each through ``services/smart/clients.py`` (the same checks and audit as the
JSON API); a confidential app's secret is shown on the registration's answer only, never on a page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Actor
from doctordesk.domain.smart.clients import MAX_REDIRECT_URI_CHARS, ClientKind
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import smart_apps as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.screen_base import acted, form_text, require_admin, viewing
from doctordesk.services.smart import clients

MAX_JWKS_CHARS = 20000


def _key_set(text: str | None, fields: dict[str, str]) -> dict[str, Any] | None:
    """The inline key set typed into the form (JSON), or None; a text that is no JSON object is noted."""
    if text is None or "jwks" in fields:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        fields["jwks"] = N_("Paste the key set as JSON: an object with a list of keys.")
        return None
    return found


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
    launch_url = form_text(form, "launch_url", max_chars=MAX_REDIRECT_URI_CHARS, fields=fields)
    keys = clients.Keys(
        form_text(form, "jwks_uri", max_chars=MAX_REDIRECT_URI_CHARS, fields=fields),
        _key_set(form_text(form, "jwks", max_chars=MAX_JWKS_CHARS, fields=fields), fields),
    )
    kind = form.get("kind", ClientKind.PUBLIC.value)
    if kind not in {k.value for k in ClientKind}:
        fields["kind"] = N_("Use public, confidential or backend.")
    if fields:
        raise ValidationFailed(fields=fields)
    new = await clients.register(
        rt, actor, name=name, kind=ClientKind(kind), redirect_uris=uris, allowed_scopes=scopes, keys=keys,
        launch_url=launch_url,
    )  # fmt: skip
    if new.secret is not None:
        text = Text(
            "Registered {app}, client id {id}. Client secret: {secret} — shown this once; give it to the app.",
            app=new.info.name, id=new.info.client_id, secret=new.secret,
        )  # fmt: skip
    else:
        text = Text("Registered {app}, client id {id}.", app=new.info.name, id=new.info.client_id)
    update = await acted(rt, page, state, "created", text)
    cleared = ("new-name", "new-redirect-uris", "new-scopes", "new-launch-url", "new-jwks-uri", "new-jwks")
    update.patches += [p_update(ref, value="") for ref in cleared]
    return update


async def set_active(
    rt: Runtime, actor: Actor, app_id: int, *, active: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    await clients.set_active(rt, actor, app_id, active=active)
    return await acted(rt, page, state, "saved", N_("Reactivated.") if active else N_("Deactivated."))
