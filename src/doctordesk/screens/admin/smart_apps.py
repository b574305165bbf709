"""The administration screen for SMART apps (docs/smart.md#clients): the registered apps with their client id,
kind, redirect URIs and scopes, deactivate or reactivate each, and a form to register one (a confidential app's
secret shown on the answer only)."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.smart.clients import ClientInfo, ClientKind
from doctordesk.i18n import N_, _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-smart-apps"
ENDPOINT = f"{BASE}/smart-apps"
KIND_WORDS = {
    ClientKind.PUBLIC: N_("Public (browser or phone app, PKCE only)"),
    ClientKind.CONFIDENTIAL: N_("Confidential (server app with a secret)"),
    ClientKind.BACKEND: N_("Backend service (a system, signed with its own key)"),
}


def _keys(c: ClientInfo) -> str:
    if c.jwks_uri:
        return _("Keys at {url}", url=c.jwks_uri)
    return _("Keys: {ids}", ids=", ".join(c.key_ids))


def _app(c: ClientInfo) -> Element:
    toggle = (
        el(f"app-toggle-{c.id}", "Button", label=_("Deactivate"),
           action=Action("POST", f"{ENDPOINT}/{c.id}/deactivate",
                         confirm=_("Deactivate {app}? Its tokens stop working at once.", app=c.name)))
        if c.active
        else el(f"app-toggle-{c.id}", "Button", label=_("Reactivate"),
                action=Action("POST", f"{ENDPOINT}/{c.id}/reactivate"))
    )  # fmt: skip
    state = _("Active") if c.active else _("Deactivated")
    return el(
        f"app-{c.id}",
        "Row",
        el(f"app-name-{c.id}", "Regular", value=f"{c.name} · {_(KIND_WORDS[c.kind])} · {state}"),
        el(f"app-client-{c.id}", "Caption", value=_("Client id: {id}", id=c.client_id)),
        el(f"app-uris-{c.id}", "Caption", value=", ".join(c.redirect_uris), visible=bool(c.redirect_uris)),
        el(f"app-keys-{c.id}", "Caption", value=_keys(c), visible=c.kind is ClientKind.BACKEND),
        el(
            f"app-launch-{c.id}",
            "Caption",
            value=_("Launch URL: {url}", url=c.launch_url or ""),
            visible=bool(c.launch_url),
        ),
        el(f"app-scopes-{c.id}", "Caption", value=" ".join(c.allowed_scopes)),
        toggle,
    )


def render(rows: Sequence[ClientInfo], *, layout: Layout, timeout: int) -> Page:
    listing = el(
        "smart-apps", "Section",
        el("smart-apps-empty", "Caption", value=_("No apps yet."), visible=not rows),
        *(_app(c) for c in rows),
        label=_("Apps"),
    )  # fmt: skip
    kinds = [Option(k.value, _(KIND_WORDS[k])) for k in ClientKind]
    form = el(
        "new-app", "Section",
        el("new-name", "Edit", label=_("Name"), name="name"),
        el("new-kind", "Combo", label=_("Kind"), name="kind", value=ClientKind.PUBLIC.value, options=kinds),
        el("new-redirect-uris", "Edit", label=_("Redirect URIs (separated by spaces)"), name="redirect_uris"),
        el("new-scopes", "Edit", label=_("Allowed scopes (separated by spaces)"), name="allowed_scopes"),
        el("new-launch-url", "Edit", label=_("Launch URL (apps an EHR launches; optional)"), name="launch_url"),
        el("new-jwks-uri", "Edit", label=_("Backend services: JWKS URL of the public keys"), name="jwks_uri"),
        el("new-jwks", "Edit", label=_("Backend services: or the public keys themselves (JWKS JSON)"), name="jwks"),
        el("register", "Button", label=_("Register app"),
           action=Action("POST", f"{ENDPOINT}/create", form="new-app")),
        label=_("Register an app"),
    )  # fmt: skip
    return page(
        screen=SCREEN, current="smart-apps", title=_("SMART apps"), endpoint=ENDPOINT,
        elements=[notice("created", tone="warning"), notice("saved"), listing, form], layout=layout, timeout=timeout,
    )  # fmt: skip
