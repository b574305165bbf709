"""The administration screen for signing in: which roles must use a second factor, the users who have one (each
with a reset for a lost phone), and the clinic's single sign-on providers as configured through the admin API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from doctordesk.i18n import _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Page, el

SCREEN = "admin-sign-in"
ENDPOINT = f"{BASE}/sign-in"
ROLE_LABELS = {"doctor": "Doctors", "support": "Support", "admin": "Administrators", "patient": "Patients"}


def _policy(required: Sequence[str]) -> Element:
    ticks = [
        el(f"required-{role}", "Checkbox", label=_(label), name=f"required~{role}", value=role in required)
        for role, label in ROLE_LABELS.items()
    ]
    return el(
        "policy",
        "Section",
        el("policy-roles", "Group", *ticks, label=_("Must sign in with a second factor")),
        el("save-policy", "Button", label=_("Save"), action=Action("POST", f"{ENDPOINT}/policy", form="policy")),
        label=_("Second factor"),
    )


def _factors(user: Mapping[str, Any]) -> str:
    kinds = []
    if user["totp"]:
        kinds.append(_("authenticator app"))
    if user["passkeys"]:
        kinds.append(_("{count} passkey(s)", count=user["passkeys"]))
    return ", ".join(kinds)


def _enrolled(users: Sequence[Mapping[str, Any]]) -> Element:
    cards = [
        el(
            f"user-{u['id']}",
            "Card",
            el(f"user-{u['id']}-factors", "Text", value=_factors(u)),
            el(f"reset-{u['id']}", "Button", label=_("Reset second factors"),
               action=Action("POST", f"{ENDPOINT}/{u['id']}/reset")),
            label=f"{u['display_name']} ({u['username']})",
        )
        for u in users
    ]  # fmt: skip
    empty = [el("no-factors", "Text", value=_("Nobody has set up a second factor yet."))] if not users else []
    return el("enrolled", "Section", *cards, *empty, label=_("Users with a second factor"))


def _providers(providers: Sequence[Mapping[str, Any]]) -> Element:
    rows = [
        el(f"sso-{p['slug']}", "Text", value=_("{name}: {issuer}", name=p["name"], issuer=p["issuer"]))
        for p in providers
    ]
    if not rows:
        rows = [el("no-sso", "Text", value=_("No single sign-on provider is configured."))]
    return el("sso", "Section", *rows, label=_("Single sign-on"))


def render(
    *,
    required: Sequence[str],
    users: Sequence[Mapping[str, Any]],
    providers: Sequence[Mapping[str, Any]],
    layout: Layout,
    timeout: int,
) -> Page:
    elements = [notice("saved"), _policy(required), _enrolled(users), _providers(providers)]
    return page(
        screen=SCREEN, current="sign-in", title=_("Signing in"), endpoint=ENDPOINT, elements=elements,
        layout=layout, timeout=timeout,
    )  # fmt: skip
