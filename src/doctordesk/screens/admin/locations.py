"""The administration screen for locations: each location's name, address and time zone, editable in place, and
a form for a new one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from doctordesk.i18n import _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Page, el

SCREEN = "admin-locations"
ENDPOINT = f"{BASE}/locations"


class LocationLike(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def address(self) -> str: ...
    @property
    def timezone(self) -> str: ...


def _fields(prefix: str, loc: LocationLike | None) -> list[Element]:
    return [
        el(f"{prefix}name", "Edit", label=_("Name"), name="name", value=loc.name if loc else None),
        el(f"{prefix}address", "Edit", label=_("Address"), name="address", value=loc.address if loc else None),
        el(f"{prefix}timezone", "Edit", label=_("Time zone, e.g. Europe/Berlin"), name="timezone",
           value=loc.timezone if loc else None),
    ]  # fmt: skip


def render(rows: Sequence[LocationLike], *, layout: Layout, timeout: int) -> Page:
    items = [
        el(
            f"location-{loc.id}",
            "Card",
            *_fields(f"location-{loc.id}-", loc),
            el(f"save-location-{loc.id}", "Button", label=_("Save"),
               action=Action("POST", f"{ENDPOINT}/{loc.id}/save", form=f"location-{loc.id}")),
            label=loc.name,
        )
        for loc in rows
    ]  # fmt: skip
    new = el(
        "new-location",
        "Section",
        *_fields("new-", None),
        el(
            "create",
            "Button",
            label=_("Add location"),
            action=Action("POST", f"{ENDPOINT}/create", form="new-location"),
        ),
        label=_("New location"),
    )
    elements = [notice("saved"), el("locations", "Section", *items, label=_("Locations")), new]
    return page(
        screen=SCREEN, current="locations", title=_("Locations"), endpoint=ENDPOINT, elements=elements, layout=layout,
        timeout=timeout,
    )  # fmt: skip
