"""The administration screen for fees: the rules in force now, a form for a new version (effective now or from a
later day), and every version ever recorded, newest first. Versions are only added, never edited: offers already
made keep the fee they showed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from doctordesk.domain.fees import SURCHARGES
from doctordesk.screens.admin_pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-fees"
ENDPOINT = f"{BASE}/fees"
KIND_LABELS = {
    "doctor_fee": "Doctor fee",
    "location_fee": "Location fee",
    **{kind: f"Surcharge: {kind.replace('_', ' ')}" for kind in SURCHARGES},
}


def describe(rule: Mapping[str, Any], doctors: Mapping[int, str], locations: Mapping[int, str]) -> str:
    """One rule as a line: kind, whose, where, how much."""
    who = doctors.get(rule["doctor_id"], "?") if rule["doctor_id"] else "any doctor"
    where = locations.get(rule["location_id"], "?") if rule["location_id"] else "any location"
    if rule["retired"]:
        amount = "ended"
    elif rule["kind"] in SURCHARGES:
        amount = f"{rule['percent']} %"
    else:
        amount = f"{rule['amount_cents'] // 100}.{rule['amount_cents'] % 100:02d} {rule['currency']}"
    return f"{KIND_LABELS.get(rule['kind'], rule['kind'])} · {who} · {where}: {amount}"


def _since(rule: Mapping[str, Any]) -> str:
    at = rule["effective_from"]
    return f"from {at[:16].replace('T', ' ')} UTC" if at else "from the start"


def _row(prefix: str, rule: Mapping[str, Any], doctors: Mapping[int, str], locations: Mapping[int, str]) -> Element:
    rid = rule["id"]
    return el(
        f"{prefix}-{rid}",
        "Row",
        el(f"{prefix}-text-{rid}", "Regular", value=describe(rule, doctors, locations)),
        el(f"{prefix}-since-{rid}", "Caption", value=_since(rule)),
    )


def render(
    in_force: Sequence[Mapping[str, Any]],
    history: Sequence[Mapping[str, Any]],
    *,
    doctors: Mapping[int, str],
    locations: Mapping[int, str],
    layout: Layout,
    timeout: int,
) -> Page:
    now = el(
        "in-force",
        "Section",
        el("in-force-empty", "Caption", value="No fee rules.", visible=not in_force),
        *(_row("fee", r, doctors, locations) for r in in_force),
        label="In force now",
    )
    form = el(
        "new-fee",
        "Section",
        el("fee-kind", "Combo", label="Kind", name="kind", value="doctor_fee",
           options=[Option(k, label) for k, label in KIND_LABELS.items()]),
        el("fee-doctor", "Combo", label="Doctor", name="doctor", value="",
           options=[Option("", "Any doctor"), *(Option(str(i), n) for i, n in doctors.items())]),
        el("fee-location", "Combo", label="Location", name="location", value="",
           options=[Option("", "Any location"), *(Option(str(i), n) for i, n in locations.items())]),
        el("fee-amount", "Edit", label="Amount (fees), e.g. 80.00", name="amount"),
        el("fee-percent", "Edit", label="Per cent of the doctor fee (surcharges)", name="percent"),
        el("fee-currency", "Edit", label="Currency", name="currency", value="EUR"),
        el("fee-effective", "Date", label="Effective from (empty or today: now; a later day: 00:00 UTC)",
           name="effective_from"),
        el("fee-retired", "Checkbox", label="End this rule instead", name="retired", value=False),
        el("add-fee", "Button", label="Add version", action=Action("POST", f"{ENDPOINT}/add", form="new-fee")),
        label="New version",
    )  # fmt: skip
    past = el(
        "history",
        "Section",
        el("history-hint", "Caption", value="Every version recorded, newest first. Versions are never changed."),
        *(_row("version", r, doctors, locations) for r in reversed(history)),
        label="History",
    )
    return page(
        screen=SCREEN, current="fees", title="Fees", endpoint=ENDPOINT, elements=[notice("saved"), now, form, past],
        layout=layout, timeout=timeout,
    )  # fmt: skip
