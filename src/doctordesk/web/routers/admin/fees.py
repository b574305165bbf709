"""Administration API: fee rules as dated versions (role admin only)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.review.fees import KINDS, MAX_AMOUNT_CENTS, MAX_PERCENT
from doctordesk.domain.roles import Role
from doctordesk.services.admin import fees as admin_fees
from doctordesk.services.admin.fees import CURRENCY, FeeRuleInput
from doctordesk.web.bodies import stated
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_INSTANT, YEARS, Instant
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin.models import Strict, instant

router = APIRouter(
    prefix="/admin", tags=["administration"], dependencies=[require_roles(Role.ADMIN)], responses=SUBMIT_RESPONSES
)


class FeeRuleCreate(Strict):
    # The kinds, ranges and currency are stated from the service's constants; the service judges them, so that a
    # refusal is its own message.
    kind: str = Field(
        min_length=1,
        max_length=32,
        description="doctor_fee, location_fee, or a surcharge: weekend, short_notice, evening",
        json_schema_extra=stated(enum=list(KINDS)),
    )
    doctor_id: int | None = Field(None, ge=1, le=MAX_ID, description="Omit: any doctor")
    location_id: int | None = Field(None, ge=1, le=MAX_ID, description="Omit: any location")
    amount_cents: int | None = Field(
        None,
        ge=0,
        description="doctor_fee and location_fee only, and required there (0: no fee)",
        json_schema_extra=stated(maximum=MAX_AMOUNT_CENTS),
    )
    percent: int | None = Field(
        None,
        ge=0,
        description="Surcharges only, and required there: per cent of the doctor fee",
        json_schema_extra=stated(maximum=MAX_PERCENT),
    )
    currency: str = Field(
        "EUR",
        min_length=3,
        max_length=3,
        description="ISO 4217, e.g. EUR",
        json_schema_extra=stated(pattern=f"^{CURRENCY.pattern}$"),
    )
    effective_from: Instant | None = Field(None, description="From when proposals use it (default now; not past)")
    retired: bool = Field(False, description="End the rule from effective_from")


@router.get("/fees")
async def list_fees(
    rt: RuntimeDep,
    at: Annotated[
        datetime | None,
        Query(description="The rules in force at this instant (default now)", json_schema_extra=YEARS),
        STRICT_INSTANT,
    ] = None,
    history: Annotated[bool, Query(description="Every version ever recorded instead")] = False,
) -> dict[str, Any]:
    """The fee rules Review and Approve uses at a moment, or their whole history."""
    return {"rules": await admin_fees.list_rules(rt, at=instant(at, "at"), history=history)}


@router.post("/fees", status_code=201)
async def add_fee_rule(rt: RuntimeDep, actor: ActorDep, body: FeeRuleCreate) -> dict[str, Any]:
    """A new version of a fee rule (per kind, doctor and location), effective now or later: proposals made from
    then on use it; offers already made keep the fee they showed."""
    rule = FeeRuleInput(**body.model_dump())
    if rule.effective_from is not None:
        rule = replace(rule, effective_from=instant(rule.effective_from, "effective_from"))
    return await admin_fees.add_rule(rt, actor, rule)
