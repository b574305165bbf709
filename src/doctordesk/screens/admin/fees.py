"""The administration screen for fees: the rules in force now, a form for a new version (effective now or from a
later day), and every version ever recorded, newest first. Versions are only added, never edited: offers already
made keep the fee they showed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from doctordesk.domain.review.fees import SURCHARGES
from doctordesk.i18n import N_, _
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.i18n.formats import format_local, money
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-fees"
ENDPOINT = f"{BASE}/fees"
# Every kind of fee rule in words (a test checks each surcharge of domain/review/fees.py has them).
KIND_LABELS = {
    "doctor_fee": N_("Doctor fee"),
    "location_fee": N_("Location fee"),
    "weekend": N_("Surcharge: weekend"),
    "short_notice": N_("Surcharge: short notice"),
    "evening": N_("Surcharge: evening"),
}


def amount_of(rule: Mapping[str, Any]) -> str:
    """What a rule charges, in the reader's format: an amount, a percentage, or "ended"."""
    if rule["retired"]:
        return _("ended")
    if rule["kind"] in SURCHARGES:
        return f"{rule['percent']}\u00a0%"
    return money(rule["amount_cents"], rule["currency"])


def kind_of(rule: Mapping[str, Any]) -> str:
    return _(KIND_LABELS[rule["kind"]]) if rule["kind"] in KIND_LABELS else str(rule["kind"])


def describe(rule: Mapping[str, Any], doctors: Mapping[int, str], locations: Mapping[int, str]) -> str:
    """One rule as a line in the reader's language: kind, whose, where, how much."""
    who = doctors.get(rule["doctor_id"], "?") if rule["doctor_id"] else _("any doctor")
    where = locations.get(rule["location_id"], "?") if rule["location_id"] else _("any location")
    return f"{kind_of(rule)} · {who} · {where}: {amount_of(rule)}"


def confirmation(
    rule: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    *,
    doctors: Mapping[int, str],
    locations: Mapping[int, str],
) -> str:
    """What saving ``rule`` changes, for whom, from when: the sentence the admin confirms before a version is
    recorded (``previous`` is the version in force for the same kind, doctor and location at that moment)."""
    who = doctors.get(rule["doctor_id"], "?") if rule["doctor_id"] else _("every doctor")
    where = locations.get(rule["location_id"], "?") if rule["location_id"] else _("every location")
    at = rule["effective_from"]
    when = _("from now") if not at else _since(rule)
    before = amount_of(previous) if previous is not None else _("no rule of its own so far")
    return _(
        "{kind} for {who} at {where}: {before} → {after}, {when}. Proposals made from then on use it; offers "
        "already sent keep the fee they showed. Nothing is saved until you confirm.",
        kind=kind_of(rule), who=who, where=where, before=before, after=amount_of(rule), when=when,
    )  # fmt: skip


def _since(rule: Mapping[str, Any]) -> str:
    at = rule["effective_from"]
    if not at:
        return _("from the start")
    return _("from {moment}", moment=format_local(datetime.fromisoformat(at), "UTC"))


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
        el("in-force-empty", "Caption", value=_("No fee rules."), visible=not in_force),
        *(_row("fee", r, doctors, locations) for r in in_force),
        label=_("In force now"),
    )
    form = el(
        "new-fee",
        "Section",
        el("fee-kind", "Combo", label=_("Kind"), name="kind", value="doctor_fee",
           options=[Option(k, _(label)) for k, label in KIND_LABELS.items()]),
        el("fee-doctor", "Combo", label=_("Doctor"), name="doctor", value="",
           options=[Option("", _("Any doctor")), *(Option(str(i), n) for i, n in doctors.items())]),
        el("fee-location", "Combo", label=_("Location"), name="location", value="",
           options=[Option("", _("Any location")), *(Option(str(i), n) for i, n in locations.items())]),
        el("fee-amount", "Edit", label=_("Amount (fees), e.g. 80.00"), name="amount"),
        el("fee-percent", "Edit", label=_("Per cent of the doctor fee (surcharges)"), name="percent"),
        el("fee-currency", "Edit", label=_("Currency"), name="currency", value="EUR"),
        el("fee-effective", "Date", label=_("Effective from (empty or today: now; a later day: 00:00 UTC)"),
           name="effective_from", **date_attrs()),
        el("fee-retired", "Checkbox", label=_("End this rule instead"), name="retired", value=False),
        el("add-fee", "Button", label=_("Add version"), action=Action("POST", f"{ENDPOINT}/add", form="new-fee")),
        el(
            "fee-confirm",
            "Section",
            el("fee-confirm-text", "Notice", props={"tone": "warning"}),
            el("confirm-fee", "Button", label=_("Confirm and save this version")),
            label=_("Check before saving"),
            visible=False,
        ),
        label=_("New version"),
    )  # fmt: skip
    past = el(
        "history",
        "Section",
        el("history-hint", "Caption", value=_("Every version recorded, newest first. Versions are never changed.")),
        *(_row("version", r, doctors, locations) for r in reversed(history)),
        label=_("History"),
    )
    return page(
        screen=SCREEN, current="fees", title=_("Fees"), endpoint=ENDPOINT, elements=[notice("saved"), now, form, past],
        layout=layout, timeout=timeout,
    )  # fmt: skip
