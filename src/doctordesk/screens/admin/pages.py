"""What every administration screen shares: its place under ``/profile/admin``, the navigation between the
screens, the topic their polls watch, and the page frame."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.i18n import N_, _
from doctordesk.screens.protocol import Action, Element, Layout, Page, el

BASE = "/profile/admin"

SECTIONS = (
    ("dashboard", N_("Dashboard"), f"{BASE}/dashboard"),
    ("users", N_("Users"), f"{BASE}/users"),
    ("locations", N_("Locations"), f"{BASE}/locations"),
    ("hours", N_("Work hours"), f"{BASE}/hours"),
    ("fees", N_("Fees"), f"{BASE}/fees"),
    ("insurance", N_("Insurance"), f"{BASE}/insurance"),
    ("webhooks", N_("Webhooks"), f"{BASE}/webhooks"),
    ("mail", N_("Mail"), f"{BASE}/mail"),
    ("clinic", N_("Clinic"), f"{BASE}/clinic"),
    ("waitlist", N_("Waitlist"), f"{BASE}/waitlist"),
    ("smart-apps", N_("SMART apps"), f"{BASE}/smart-apps"),
    ("sign-in", N_("Signing in"), f"{BASE}/sign-in"),
    ("sso", N_("Single sign-on"), f"{BASE}/sso"),
    ("audit", N_("Audit trail"), f"{BASE}/audit"),
)


def nav(current: str) -> Element:
    """Links to the administration screens, the current one marked."""
    return el(
        "admin-nav",
        "Group",
        *(
            el(f"nav-{key}", "Link", label=_(label), highlighted=key == current, action=Action("PUT", endpoint))
            for key, label, endpoint in SECTIONS
        ),
        label=_("Administration"),
    )


def notice(ref: str, text: str | None = None, *, tone: str = "info") -> Element:
    """A notice the screen's actions fill in (hidden until then)."""
    return el(ref, "Notice", value=text, visible=text is not None, props={"tone": tone})


def page(
    *, screen: str, current: str, title: str, endpoint: str, elements: Sequence[Element], layout: Layout, timeout: int
) -> Page:
    return Page(
        screen=screen,
        title=title,
        endpoint=endpoint,
        poll=endpoint,
        timeout=timeout,
        elements=(nav(current), el("title", "Heading", value=title), *elements),
        layout=layout,
    )
