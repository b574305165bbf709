"""The administration screen for the clinic's settings (docs/administration.md#clinic-settings): reminders before
appointments (on or off, the hours before the start, quiet hours) and the waitlist's policy (docs/waitlist.md).
Each section is a form of its own with its Save."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.i18n import _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-clinic"
ENDPOINT = f"{BASE}/clinic"


def _reminders(values: Mapping[str, str]) -> Element:
    return el(
        "reminders",
        "Section",
        el("reminders-enabled", "Checkbox", label=_("Send reminders before appointments"), name="reminders_enabled",
           value=values["reminders_enabled"] == "true"),
        el("reminder-hours", "Edit", label=_("Hours before the start, comma-separated (e.g. 24,2)"),
           name="reminder_hours", value=values["reminder_hours"]),
        el("quiet-begin", "Edit", label=_("Quiet hours from (HH:MM, empty: none)"), name="quiet_begin",
           value=values["quiet_begin"]),
        el("quiet-end", "Edit", label=_("Quiet hours until (HH:MM)"), name="quiet_end", value=values["quiet_end"]),
        el("quiet-note", "Caption", value=_(
            "Quiet hours are in each location's time zone. A reminder due in them goes at their end, or at their "
            "start when the appointment begins before they end."
        )),
        el("save-clinic", "Button", label=_("Save"), action=Action("POST", f"{ENDPOINT}/save", form="reminders")),
        label=_("Reminders"),
    )  # fmt: skip


def _waitlist(values: Mapping[str, str]) -> Element:
    modes = [
        Option("one-at-a-time", _("To one patient at a time, in order of waiting")),
        Option("all-at-once", _("To every matching patient at once: the first to accept")),
    ]
    return el(
        "waitlist",
        "Section",
        el("waitlist-mode", "Combo", label=_("A freed time is offered"), name="waitlist_mode",
           value=values["waitlist_mode"], options=modes),
        el("waitlist-offer-minutes", "Edit", label=_("Minutes each patient has to accept (one at a time)"),
           name="waitlist_offer_minutes", value=values["waitlist_offer_minutes"], props={"inputmode": "numeric"}),
        el("waitlist-direct-move", "Checkbox", label=_(
            "Accepting moves the patient's approved appointment with the same doctor and service at once"
        ), name="waitlist_direct_move", value=values["waitlist_direct_move"] == "true"),
        el("save-waitlist", "Button", label=_("Save"), action=Action("POST", f"{ENDPOINT}/save", form="waitlist")),
        label=_("Waitlist"),
    )  # fmt: skip


def render(values: Mapping[str, str], *, layout: Layout, timeout: int) -> Page:
    elements = [notice("saved"), _reminders(values), _waitlist(values)]
    return page(
        screen=SCREEN, current="clinic", title=_("Clinic"), endpoint=ENDPOINT, elements=elements, layout=layout,
        timeout=timeout,
    )  # fmt: skip
