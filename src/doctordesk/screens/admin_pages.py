"""What every administration screen shares: its place under ``/profile/admin``, the navigation between the
screens, the topic their polls watch, and the page frame."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.screens.protocol import Action, Element, Layout, Page, el

BASE = "/profile/admin"
# Administration screens change when an admin changes something through them: each action publishes this topic,
# so every admin's open screens catch up on their next poll or real-time update.
ADMIN_TOPIC = "admin"

SECTIONS = (
    ("users", "Users", f"{BASE}/users"),
    ("locations", "Locations", f"{BASE}/locations"),
    ("hours", "Work hours", f"{BASE}/hours"),
    ("fees", "Fees", f"{BASE}/fees"),
    ("insurance", "Insurance", f"{BASE}/insurance"),
    ("webhooks", "Webhooks", f"{BASE}/webhooks"),
    ("audit", "Audit trail", f"{BASE}/audit"),
)


def nav(current: str) -> Element:
    """Links to the administration screens, the current one marked."""
    return el(
        "admin-nav",
        "Group",
        *(
            el(f"nav-{key}", "Link", label=label, highlighted=key == current, action=Action("PUT", endpoint))
            for key, label, endpoint in SECTIONS
        ),
        label="Administration",
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
