"""The consent page of a SMART launch: which app asks, what it asks in words, a patient to pick for a staff
user's patient launch, Allow and Deny. Reached through the authorization endpoint's redirect; the user signs in to
the web app first when they are not (docs/smart.md#consent)."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.smart import scopes as smart_scopes
from doctordesk.i18n import N_, _
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "smart-consent"
BASE = "/profile/smart/authorize"

PLAIN_WORDS = {
    smart_scopes.OPENID: N_("Know who you are (your name and account)"),
    smart_scopes.FHIR_USER: N_("Know which person record is yours"),
    smart_scopes.LAUNCH_PATIENT: N_("Know which patient the launch is for"),
    smart_scopes.OFFLINE: N_("Keep access after you leave, until you revoke it"),
    smart_scopes.ONLINE: N_("Keep access while you use it"),
}
PERMISSION_WORDS = {
    "c": N_("create"),
    "r": N_("read"),
    "u": N_("change"),
    "d": N_("delete"),
    "s": N_("search"),
}


def endpoint(ticket: str) -> str:
    return f"{BASE}/{ticket}"


def describe(scope: str) -> str:
    """One scope in the reader's words."""
    if scope in PLAIN_WORDS:
        return _(PLAIN_WORDS[scope])
    parsed = smart_scopes.resource_scope(scope)
    if parsed is None:
        return scope
    what = _("every kind of record") if parsed.resource == "*" else parsed.resource
    verbs = ", ".join(_(PERMISSION_WORDS[p]) for p in "cruds" if p in parsed.permissions)
    if parsed.context == "patient":
        return _("{verbs}: {what} of the patient", verbs=verbs, what=what)
    return _("{verbs}: {what} you may see", verbs=verbs, what=what)


def render(
    ticket: str,
    *,
    client_name: str,
    scopes: Sequence[str],
    patients: Sequence[tuple[int, str]] | None,
    layout: Layout,
    timeout: int,
) -> Page:
    """The page; ``patients``: the choice of a staff user's patient launch (None: no choice to make)."""
    base = endpoint(ticket)
    asked = el(
        "scopes", "Group", *(el(f"scope-{i}", "Regular", value=describe(s)) for i, s in enumerate(scopes)),
        label=_("{app} asks to:", app=client_name),
    )  # fmt: skip
    choice: list[Element] = []
    if patients is not None:
        options = [Option("", _("Choose a patient")), *(Option(str(pid), name) for pid, name in patients)]
        choice.append(el("patient", "Combo", label=_("Patient"), name="patient", value="", options=options))
    form = el(
        "consent",
        "Section",
        asked,
        *choice,
        el("allow", "Button", label=_("Allow"), action=Action("POST", f"{base}/allow", form="consent")),
        el("deny", "Button", label=_("Deny"), action=Action("POST", f"{base}/deny")),
        label=_("Access for {app}", app=client_name),
    )
    title = _("Allow {app}?", app=client_name)
    return Page(
        screen=SCREEN, title=title, endpoint=base, poll=base, timeout=timeout,
        elements=(el("title", "Heading", value=title), form), layout=layout,
    )  # fmt: skip
