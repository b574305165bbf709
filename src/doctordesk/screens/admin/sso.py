"""The administration screen for single sign-on (docs/administration.md#single-sign-on): the clinic's OpenID
Connect providers, each in a form to change or delete it, and a form for a new one. The client secret is never
shown: its field stays empty, and an empty field keeps the stored secret."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from doctordesk.domain.accounts.sso_claims import CREATABLE
from doctordesk.i18n import _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-sso"
ENDPOINT = f"{BASE}/sso"
NEW = "new"  # the prefix of the new provider's fields


def role_map_text(role_map: Mapping[str, str]) -> str:
    """The claim-to-role mapping as the form writes it: ``claim value=role`` pairs, comma-separated."""
    return ", ".join(f"{claim}={role}" for claim, role in role_map.items())


def _fields(key: str, p: Mapping[str, Any]) -> list[Element]:
    """The fields of one provider's form (``key``: its slug, or NEW), ids unique per form, names shared."""
    roles = [Option("", _("None: unknown users are refused")), *(Option(r.value, r.value) for r in CREATABLE)]
    match = [Option("username", _("Username")), Option("external_id", _("External id"))]
    secret_hint = _("Leave empty to keep the stored secret.") if key != NEW else None
    return [
        el(f"{key}-name", "Edit", label=_("Name on the sign-in button"), name="name", value=p.get("name", "")),
        el(f"{key}-issuer", "Edit", label=_("Issuer URL (https://…)"), name="issuer", value=p.get("issuer", "")),
        el(f"{key}-client-id", "Edit", label=_("Client id"), name="client_id", value=p.get("client_id", "")),
        el(f"{key}-client-secret", "Password", label=_("Client secret"), name="client_secret", value="",
           placeholder=secret_hint),
        el(f"{key}-match-claim", "Edit", label=_("Claim that finds the user"), name="match_claim",
           value=p.get("match_claim", "email")),
        el(f"{key}-match-field", "Combo", label=_("Compared with"), name="match_field",
           value=p.get("match_field", "username"), options=match),
        el(f"{key}-role-claim", "Edit", label=_("Claim that names the role (optional)"), name="role_claim",
           value=p.get("role_claim") or ""),
        el(f"{key}-role-map", "Edit", label=_("Role per claim value (value=role, comma-separated)"),
           name="role_map", value=role_map_text(p.get("role_map") or {})),
        el(f"{key}-default-role", "Combo", label=_("Role of new users otherwise"), name="default_role",
           value=p.get("default_role") or "", options=roles),
        el(f"{key}-create-users", "Checkbox", label=_("Create users who are not known yet"), name="create_users",
           value=bool(p.get("create_users", False))),
        el(f"{key}-active", "Checkbox", label=_("Active (shown on the sign-in page)"), name="active",
           value=bool(p.get("active", True))),
    ]  # fmt: skip


def _provider(p: Mapping[str, Any]) -> Element:
    slug = p["slug"]
    return el(
        f"sso-{slug}", "Card",
        *_fields(slug, p),
        el(f"save-{slug}", "Button", label=_("Save"), action=Action("POST", f"{ENDPOINT}/{slug}", form=f"sso-{slug}")),
        el(f"delete-{slug}", "Button", label=_("Delete"),
           action=Action("POST", f"{ENDPOINT}/{slug}/delete",
                         confirm=_("Delete {name}? Its users sign in with a password an admin gives them.",
                                   name=p["name"]))),
        label=_("{name} ({slug})", name=p["name"], slug=slug),
    )  # fmt: skip


def render(providers: Sequence[Mapping[str, Any]], *, layout: Layout, timeout: int) -> Page:
    listing = el(
        "providers", "Section",
        el("no-providers", "Caption", value=_("No single sign-on provider is configured."), visible=not providers),
        *(_provider(p) for p in providers),
        label=_("Providers"),
    )  # fmt: skip
    form = el(
        "new-provider", "Section",
        el("new-slug", "Edit", label=_("Short name in addresses (a-z, 0-9, -)"), name="slug"),
        *_fields(NEW, {}),
        el("add-provider", "Button", label=_("Add provider"),
           action=Action("POST", f"{ENDPOINT}/create", form="new-provider")),
        label=_("Add a provider"),
    )  # fmt: skip
    return page(
        screen=SCREEN, current="sso", title=_("Single sign-on"), endpoint=ENDPOINT,
        elements=[notice("saved"), listing, form], layout=layout, timeout=timeout,
    )  # fmt: skip
