"""The fees administration screen (``screens/admin/fees.py``): its page and its one action, a new version of a
rule, through ``admin_fees`` (the JSON API's service: same checks, same audit with before and after).

The form's effective day: empty or today means now; a later day means 00:00 UTC of that day (a day in the past
is refused by the service: fees already shown are history)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from doctordesk.domain import moments
from doctordesk.domain.edges import earliest
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import parse_id, parse_int
from doctordesk.domain.review.fees import KINDS, MAX_PERCENT, charged_by
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import fees as screen
from doctordesk.screens.protocol import Action, Layout, Page, UpdateSet, p_update
from doctordesk.screens.state import lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin import fees as admin_fees
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.screen_base import acted, form_flag, require_admin, viewing

_AMOUNT = re.compile(r"([0-9]{1,6})(?:\.([0-9]{1,2}))?", re.ASCII)


def fees_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        async with rt.db.read() as session:
            c = await cached_clinic(rt, session)
        at = rt.clock.now()
        in_force = await admin_fees.list_rules(rt, at=at, history=False)
        history = await admin_fees.list_rules(rt, at=at, history=True)
        page = screen.render(
            in_force, history, doctors=c.directory.doctors, locations=c.location_names, layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )  # fmt: skip
        # "In force now" changes when a recorded version comes into force.
        starts = (datetime.fromisoformat(r["effective_from"]) for r in history if r["effective_from"])
        return lasting(page, earliest(starts, after=at))

    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=screen.ENDPOINT, render=render, client_id=client_id)


def _cents(raw: str | None, fields: dict[str, str], *, required: bool) -> int:
    if not raw or not raw.strip():
        if required:
            fields["amount"] = N_("Required: the fee's amount, such as 80 or 80.50.")
        return 0
    match = _AMOUNT.fullmatch(raw.strip())
    if match is None:
        fields["amount"] = N_("An amount such as 80 or 80.50.")
        return 0
    whole, part = match.groups()
    return int(whole) * 100 + int((part or "0").ljust(2, "0"))


def _effective(raw: str | None, now: datetime, fields: dict[str, str]) -> datetime | None:
    if not raw:
        return None
    day = moments.form_day(raw, "effective_from", fields, message=moments.FORM_DAY_MESSAGE)
    if day is None:
        return None
    if day == now.astimezone(UTC).date():
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def rule_from_form(form: Mapping[str, str], now: datetime) -> admin_fees.FeeRuleInput:
    """The form as the service's input; every field's problem at once."""
    fields: dict[str, str] = {}
    kind = form.get("kind") or ""
    if kind not in KINDS:
        fields["kind"] = N_("Choose a kind.")
    doctor, location = parse_id(form.get("doctor")), parse_id(form.get("location"))
    if form.get("doctor") and doctor is None:
        fields["doctor"] = N_("Choose a doctor.")
    if form.get("location") and location is None:
        fields["location"] = N_("Choose a location.")
    retired = form_flag(form, "retired", fields)
    # An empty form must never record a free fee: the amount (fees) or the percentage (surcharges) is required,
    # unless the version ends the rule.
    charge = charged_by(kind, retired=bool(retired))
    cents = _cents(form.get("amount"), fields, required=charge == "amount")
    percent = 0
    if charge == "percent" and not (form.get("percent") or "").strip():
        fields["percent"] = N_("Required: the surcharge in per cent of the doctor fee.")
    elif form.get("percent"):
        parsed = parse_int(form.get("percent"), minimum=0, maximum=MAX_PERCENT)
        if parsed is None:
            fields["percent"] = Text("A whole number from {low} to {high}.", low=0, high=MAX_PERCENT)
        percent = parsed or 0
    currency = (form.get("currency") or "EUR").strip().upper()
    effective = _effective(form.get("effective_from"), now, fields)
    if fields:
        raise ValidationFailed(fields=fields)
    return admin_fees.FeeRuleInput(
        kind=kind, doctor_id=doctor, location_id=location, amount_cents=cents, percent=percent, currency=currency,
        effective_from=effective, retired=bool(retired),
    )  # fmt: skip


_FIELD_NAMES = {"amount_cents": "amount", "doctor_id": "doctor", "location_id": "location"}


def digest(rule: admin_fees.FeeRuleInput) -> str:
    """The version a confirmation shows, as 16 hex digits: "Confirm" saves only the very rule it described."""
    data = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(rule).items()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _as_json(rule: admin_fees.FeeRuleInput) -> dict[str, Any]:
    return {
        "kind": rule.kind, "doctor_id": rule.doctor_id, "location_id": rule.location_id,
        "amount_cents": 0 if rule.retired else rule.amount_cents, "percent": 0 if rule.retired else rule.percent,
        "currency": rule.currency, "retired": rule.retired,
        "effective_from": rule.effective_from.isoformat() if rule.effective_from else None,
    }  # fmt: skip


async def _ask(rt: Runtime, rule: admin_fees.FeeRuleInput, state: str | None) -> UpdateSet:
    """Nothing written: the answer shows what the version changes, for whom, from when, and a "Confirm" that
    sends the same form with this version's digest."""
    fields = {_FIELD_NAMES.get(k, k): v for k, v in admin_fees.check(rule, rt.clock.now()).items()}
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    if rule.doctor_id is not None and rule.doctor_id not in c.directory.doctors:
        fields["doctor"] = N_("Unknown doctor.")
    if rule.location_id is not None and rule.location_id not in c.location_names:
        fields["location"] = N_("Unknown location.")
    if fields:
        raise ValidationFailed(fields=fields)
    key = (rule.kind, rule.doctor_id, rule.location_id)
    current = await admin_fees.list_rules(rt, at=rule.effective_from, history=False)
    previous = next((r for r in current if (r["kind"], r["doctor_id"], r["location_id"]) == key), None)
    text = screen.confirmation(_as_json(rule), previous, doctors=c.directory.doctors, locations=c.location_names)
    again = Action("POST", f"{screen.ENDPOINT}/add?confirm={digest(rule)}", form="new-fee")
    update = UpdateSet(screen=screen.SCREEN, state=state or "", timeout=rt.settings.poll_list_seconds)
    update.patches += [
        p_update("fee-confirm", visible=True),
        p_update("fee-confirm-text", value=text),
        p_update("confirm-fee", action=again.to_json()),
    ]
    return update


async def add_version(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, confirm: str | None, page: Viewing, state: str | None
) -> UpdateSet:
    """Record the form as a new version of its rule; the service's field names are the form's. Without the
    digest of this very version (``confirm``) nothing is written: the answer asks to confirm what changes."""
    require_admin(actor)
    rule = rule_from_form(form, rt.clock.now())
    if confirm != digest(rule):
        return await _ask(rt, rule, state)
    try:
        saved = await admin_fees.add_rule(rt, actor, rule)
    except ValidationFailed as exc:
        raise ValidationFailed(fields={_FIELD_NAMES.get(k, k): v for k, v in exc.fields.items()}) from exc
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    text = Text("Added: {rule}.", rule=screen.describe(saved, c.directory.doctors, c.location_names))
    update = await acted(rt, page, state, "saved", text)
    update.patches += [p_update(ref, value="") for ref in ("fee-amount", "fee-percent", "fee-effective")]
    update.patches.append(p_update("fee-confirm", visible=False))
    return update
