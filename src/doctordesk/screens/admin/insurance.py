"""The administration screen for insurance: the insurers named on policies, one patient's policies (coverage
period, network membership of doctors and locations, exclusions, the insurer's record and whether it passes the
rules), each editable in place, and a form for a new policy. Policies are never deleted: one ends with its last
covered day."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from doctordesk.i18n import _
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-insurance"
ENDPOINT = f"{BASE}/insurance"
MAX_PATIENTS = 500
VALID = "valid"  # the insurer's record passes the rules (``admin_policies.policy_json``)


def endpoint(patient_id: int | None) -> str:
    return f"{ENDPOINT}?{urlencode({'patient': patient_id})}" if patient_id is not None else ENDPOINT


def _count(insurer: str, policies: int) -> str:
    if policies == 1:
        return _("{insurer} (1 policy)", insurer=insurer)
    return _("{insurer} ({count} policies)", insurer=insurer, count=policies)


def _record(status: str) -> str:
    """Whether the insurer's record passes the rules: valid, or the rule's reason."""
    if status == VALID:
        return _("Insurer's record: valid")
    return _("Insurer's record: {problem}", problem=_(status))  # a rule's text, never typed by a person


def _ticks(prefix: str, field: str, label: str, names: Mapping[int, str], chosen: Sequence[int]) -> Element:
    return el(
        f"{prefix}{field}",
        "Group",
        *(el(f"{prefix}{field}-{i}", "Checkbox", label=name, name=f"{field}~{i}", value=i in chosen)
          for i, name in names.items()),
        label=label,
    )  # fmt: skip


def _fields(
    prefix: str, p: Mapping[str, Any] | None, doctors: Mapping[int, str], locations: Mapping[int, str]
) -> list[Element]:
    network = p["network"] if p else {"doctors": [], "locations": []}
    exclusions = p["exclusions"] if p else {"services": [], "doctors": []}
    return [
        el(f"{prefix}insurer", "Edit", label=_("Insurer"), name="insurer", value=p["insurer"] if p else None),
        el(f"{prefix}number", "Edit", label=_("Policy number"), name="policy_number",
           value=p["policy_number"] if p else None),
        el(f"{prefix}from", "Date", label=_("Covered from"), name="valid_from", value=p["valid_from"] if p else None,
           **date_attrs()),
        el(f"{prefix}to", "Date", label=_("Covered until (inclusive)"), name="valid_to",
           value=p["valid_to"] if p else None, **date_attrs()),
        _ticks(prefix, "network_doctor", _("In-network doctors (none ticked: any)"), doctors, network["doctors"]),
        _ticks(prefix, "network_location", _("In-network locations (none ticked: any)"), locations,
               network["locations"]),
        el(f"{prefix}excluded-services", "Edit", label=_("Excluded services, comma-separated"),
           name="excluded_services", value=", ".join(exclusions["services"])),
        _ticks(prefix, "excluded_doctor", _("Doctors the policy forbids"), doctors, exclusions["doctors"]),
        el(f"{prefix}record", "Edit", label=_("The insurer's record (as received)"), name="third_party_data",
           value=p["third_party_data"] if p else None, props={"multiline": True, "maxlength": 10_000}),
    ]  # fmt: skip


def render(
    *,
    patient_id: int | None,
    patients: Sequence[Option],
    insurers: Sequence[Mapping[str, Any]],
    policies: Sequence[Mapping[str, Any]],
    doctors: Mapping[int, str],
    locations: Mapping[int, str],
    layout: Layout,
    timeout: int,
) -> Page:
    known = ", ".join(_count(i["name"], i["policies"]) for i in insurers) or _("none yet")
    choice = el(
        "choice",
        "Section",
        el("patient", "Combo", label=_("Patient"), name="patient", value=str(patient_id or ""), options=patients,
           action=Action("PATCH", f"{ENDPOINT}/choose", form="choice")),
        el("insurers", "Caption", value=_("Insurers named on policies: {known}.", known=known)),
        label=_("Whose policies"),
    )  # fmt: skip
    cards = [
        el(
            f"policy-{p['id']}",
            "Card",
            el(f"policy-{p['id']}-patient", "Hidden", name="patient", value=str(p["patient_id"])),
            el(f"policy-{p['id']}-status", "Caption", value=_record(p["third_party_status"])),
            *_fields(f"policy-{p['id']}-", p, doctors, locations),
            el(
                f"save-policy-{p['id']}",
                "Button",
                label=_("Save"),
                action=Action("POST", f"{ENDPOINT}/policies/{p['id']}/save", form=f"policy-{p['id']}"),
            ),
            label=f"{p['insurer']} · {p['policy_number']}",
        )  # fmt: skip
        for p in policies
    ]
    listing = el(
        "policies",
        "Section",
        el("policies-empty", "Caption", value=_("No policies."), visible=not policies),
        *cards,
        label=_("Policies"),
    )
    new = el(
        "new-policy",
        "Section",
        el("new-patient", "Hidden", name="patient", value=str(patient_id or "")),
        *_fields("new-", None, doctors, locations),
        el("create", "Button", label=_("Add policy"), action=Action("POST", f"{ENDPOINT}/create", form="new-policy")),
        label=_("New policy"),
        visible=patient_id is not None,
    )
    return page(
        screen=SCREEN, current="insurance", title=_("Insurance"), endpoint=endpoint(patient_id),
        elements=[notice("saved"), choice, listing, new], layout=layout, timeout=timeout,
    )  # fmt: skip
