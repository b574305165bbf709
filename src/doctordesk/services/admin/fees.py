"""Administration of fee rules: the rules Review and Approve computes fees from, edited as dated versions.

A change is a new row with an effective date (now, or later): proposals made from that moment use it, earlier
offers keep the fee they were shown (stored with each offer). Rows are never updated or deleted; a rule is ended
by a ``retired`` version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.review.fees import KINDS, MAX_AMOUNT_CENTS, MAX_PERCENT, FeeRow, charged_by, in_force
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.scheduling.clinic_facts import clinic_changed
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import FeeSchedule, Location, User

CURRENCY = re.compile(r"[A-Z]{3}")


@dataclass(frozen=True, slots=True)
class FeeRuleInput:
    kind: str
    doctor_id: int | None = None
    location_id: int | None = None
    amount_cents: int | None = None  # required for a doctor or location fee (0: no fee)
    percent: int | None = None  # required for a surcharge
    currency: str = "EUR"
    effective_from: datetime | None = None  # None: now
    retired: bool = False


def rule_json(row: FeeSchedule) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "doctor_id": row.doctor_id,
        "location_id": row.location_id,
        "amount_cents": row.amount_cents,
        "percent": row.percent,
        "currency": row.currency,
        "effective_from": row.effective_from.isoformat() if row.effective_from else None,
        "retired": row.retired,
    }


def _row(f: FeeSchedule) -> FeeRow:
    return FeeRow(
        f.kind, f.doctor_id, f.location_id, f.amount_cents, f.percent, f.currency, f.effective_from, f.retired
    )


async def _all(session: AsyncSession) -> list[FeeSchedule]:
    return list((await session.execute(select(FeeSchedule).order_by(FeeSchedule.id))).scalars())


async def list_rules(rt: Runtime, *, at: datetime | None, history: bool) -> list[dict[str, Any]]:
    """The rules in force at ``at`` (default now), or every version ever recorded (``history``)."""
    async with rt.db.read() as session:
        rows = await _all(session)
    if history:
        return [rule_json(r) for r in rows]
    return [rule_json(r) for r in _in_force(rows, at or rt.clock.now())]


def _in_force(rows: list[FeeSchedule], at: datetime) -> list[FeeSchedule]:
    """The stored rows ``in_force`` keeps (it returns the very versions it was given)."""
    versions = [_row(r) for r in rows]
    kept = {id(v) for v in in_force(versions, at)}
    return [r for r, v in zip(rows, versions, strict=True) if id(v) in kept]


def check(rule: FeeRuleInput, now: datetime) -> dict[str, str]:
    """Every field's problem, by the API's field names (empty: the rule may be recorded)."""
    fields: dict[str, str] = {}
    charge = charged_by(rule.kind, retired=rule.retired)
    if rule.kind not in KINDS:
        fields["kind"] = Text("One of: {choices}.", choices=", ".join(KINDS))
    elif charge == "amount":
        if rule.amount_cents is None:
            fields["amount_cents"] = N_("Give the amount (0 for no fee).")
        elif not 0 <= rule.amount_cents <= MAX_AMOUNT_CENTS:
            fields["amount_cents"] = Text("{low} to {high}.", low=0, high=MAX_AMOUNT_CENTS)
        if rule.percent:
            fields["percent"] = N_("Only for surcharges.")
    elif charge == "percent":
        if rule.percent is None:
            fields["percent"] = N_("Give the percentage of the doctor fee.")
        elif not 0 <= rule.percent <= MAX_PERCENT:
            fields["percent"] = Text("{low} to {high}.", low=0, high=MAX_PERCENT)
        if rule.amount_cents:
            fields["amount_cents"] = N_("A surcharge is a percentage of the doctor fee.")
    if not CURRENCY.fullmatch(rule.currency):
        fields["currency"] = N_("Three capital letters (ISO 4217), e.g. EUR.")
    if rule.effective_from is not None:
        if rule.effective_from.tzinfo is None:
            fields["effective_from"] = N_("Give a time zone offset.")
        elif rule.effective_from < now:
            fields["effective_from"] = N_("Not in the past: fees already shown are history.")
    return fields


async def add_rule(rt: Runtime, actor: Actor, rule: FeeRuleInput) -> dict[str, Any]:
    """Record a new version of a fee rule, effective now or later."""
    now = rt.clock.now()
    fields = check(rule, now)
    if fields:
        raise ValidationFailed(fields=fields)
    effective = rule.effective_from or now
    async with unit_of_work(rt) as uow:
        session = uow.session
        if rule.doctor_id is not None:
            role = await session.scalar(select(User.role).where(User.id == rule.doctor_id))
            if role != Role.DOCTOR:
                raise ValidationFailed(fields={"doctor_id": N_("Unknown doctor.")})
        if rule.location_id is not None and await session.get(Location, rule.location_id) is None:
            raise ValidationFailed(fields={"location_id": N_("Unknown location.")})
        key = (rule.kind, rule.doctor_id, rule.location_id)
        current = _in_force(await _all(session), effective)
        previous = next((r for r in current if (r.kind, r.doctor_id, r.location_id) == key), None)
        row = FeeSchedule(
            kind=rule.kind, doctor_id=rule.doctor_id, location_id=rule.location_id,
            amount_cents=0 if rule.retired else rule.amount_cents or 0,
            percent=0 if rule.retired else rule.percent or 0,
            currency=rule.currency, effective_from=effective, retired=rule.retired,
        )  # fmt: skip
        session.add(row)
        await session.flush()
        after = rule_json(row)
        record_change(
            session, actor, at=now, action="admin.fee-rule-added", entity="fee_rule", entity_id=row.id,
            before=rule_json(previous) if previous is not None else None, after=after,
        )  # fmt: skip
    await clinic_changed(rt)
    return after
