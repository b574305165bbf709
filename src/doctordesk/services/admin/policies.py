"""Administration of insurance: patients' policies (insurer, number, period, network, exclusions, the insurer's
record) — the data behind APPOINTMENT_DATE_NOT_COVERED, FORBIDDEN_DUE_TO_POLICY_TERMS, THIRD_PARTY_DATA_INVALID
and the out-of-network warning. Each change is audited with its before and after; policies are never deleted (a
policy ends with its ``valid_to``).

Insurers are the names policies carry; the insurer list is read from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import DomainError, NotFound, ValidationFailed
from doctordesk.domain.events import clinic_changed
from doctordesk.domain.names import check_name
from doctordesk.domain.review.coverage import check_third_party
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import InsurancePolicy, Location, Patient, User

MAX_RECORD_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class PolicyInput:
    """A policy's fields; in an edit, None leaves a field as it is (``third_party_data`` then needs
    ``clear_third_party_data`` to be emptied)."""

    insurer: str | None = None
    policy_number: str | None = None
    valid_from: date | None = None
    valid_to: date | None = None
    network_doctors: Sequence[int] | None = None
    network_locations: Sequence[int] | None = None
    excluded_services: Sequence[str] | None = None
    excluded_doctors: Sequence[int] | None = None
    third_party_data: str | None = None
    clear_third_party_data: bool = False


def policy_json(policy: InsurancePolicy) -> dict[str, Any]:
    try:
        check_third_party(policy.third_party_data)
        record = "valid"  # screens/admin/insurance.py's VALID
    except DomainError as exc:
        record = exc.message
    network, exclusions = policy.network or {}, policy.exclusions or {}
    return {
        "id": policy.id,
        "patient_id": policy.patient_id,
        "insurer": policy.insurer,
        "policy_number": policy.policy_number,
        "valid_from": policy.valid_from.isoformat(),
        "valid_to": policy.valid_to.isoformat(),
        "network": {"doctors": network.get("doctors", []), "locations": network.get("locations", [])},
        "exclusions": {"services": exclusions.get("services", []), "doctors": exclusions.get("doctors", [])},
        "third_party_data": policy.third_party_data,
        "third_party_status": record,
    }


async def list_insurers(rt: Runtime) -> list[dict[str, Any]]:
    """Every insurer named on a policy, with how many policies name it."""
    async with rt.db.read() as session:
        rows = await session.execute(
            select(InsurancePolicy.insurer, func.count())
            .group_by(InsurancePolicy.insurer)
            .order_by(InsurancePolicy.insurer)
        )
        return [{"name": name, "policies": count} for name, count in rows]


async def list_policies(rt: Runtime, patient_id: int) -> list[dict[str, Any]]:
    async with rt.db.read() as session:
        if await session.get(Patient, patient_id) is None:
            raise NotFound(N_("Patient not found."))
        rows = await session.execute(
            select(InsurancePolicy).where(InsurancePolicy.patient_id == patient_id).order_by(InsurancePolicy.id)
        )
        return [policy_json(p) for p in rows.scalars()]


async def _check_refs(session: AsyncSession, data: PolicyInput) -> dict[str, str]:
    """Doctor and location ids must name doctors and locations."""
    fields: dict[str, str] = {}
    doctor_lists = {"network.doctors": data.network_doctors, "exclusions.doctors": data.excluded_doctors}
    wanted = {i for ids in doctor_lists.values() for i in ids or ()}
    if wanted:
        known = set(await session.scalars(select(User.id).where(User.id.in_(wanted), User.role == Role.DOCTOR.value)))
        for name, ids in doctor_lists.items():
            if set(ids or ()) - known:
                unknown = ", ".join(str(i) for i in sorted(set(ids or ()) - known))
                fields[name] = Text("Unknown doctor ids: {ids}", ids=unknown)
    if data.network_locations:
        known = set(await session.scalars(select(Location.id).where(Location.id.in_(set(data.network_locations)))))
        missing = set(data.network_locations) - known
        if missing:
            unknown = ", ".join(str(i) for i in sorted(missing))
            fields["network.locations"] = Text("Unknown location ids: {ids}", ids=unknown)
    return fields


def _check_values(data: PolicyInput) -> dict[str, str]:
    fields: dict[str, str] = {}
    check_name(fields, "insurer", data.insurer, max_chars=128)
    check_name(fields, "policy_number", data.policy_number, max_chars=64)
    if data.excluded_services is not None and any(not 1 <= len(s.strip()) <= 64 for s in data.excluded_services):
        fields["exclusions.services"] = N_("Service names of 1 to 64 characters.")
    for service in data.excluded_services or ():
        check_name(fields, "exclusions.services", service, max_chars=64)
    if data.third_party_data is not None and len(data.third_party_data) > MAX_RECORD_CHARS:
        fields["third_party_data"] = Text("At most {count} characters.", count=MAX_RECORD_CHARS)
    return fields


def _apply(p: InsurancePolicy, data: PolicyInput) -> None:
    if data.insurer is not None:
        p.insurer = data.insurer.strip()
    if data.policy_number is not None:
        p.policy_number = data.policy_number.strip()
    if data.valid_from is not None:
        p.valid_from = data.valid_from
    if data.valid_to is not None:
        p.valid_to = data.valid_to
    network, exclusions = dict(p.network or {}), dict(p.exclusions or {})
    if data.network_doctors is not None:
        network["doctors"] = sorted(set(data.network_doctors))
    if data.network_locations is not None:
        network["locations"] = sorted(set(data.network_locations))
    if data.excluded_services is not None:
        exclusions["services"] = sorted({s.strip() for s in data.excluded_services})
    if data.excluded_doctors is not None:
        exclusions["doctors"] = sorted(set(data.excluded_doctors))
    p.network, p.exclusions = network, exclusions  # new objects: the JSON columns see the change
    if data.third_party_data is not None:
        p.third_party_data = data.third_party_data
    elif data.clear_third_party_data:
        p.third_party_data = None


async def create_policy(rt: Runtime, actor: Actor, patient_id: int, data: PolicyInput) -> dict[str, Any]:
    """A new policy for a patient (insurer, number and period required)."""
    missing = {
        k: N_("Required.") for k in ("insurer", "policy_number", "valid_from", "valid_to") if getattr(data, k) is None
    }
    fields = missing or _check_values(data)
    if not fields and data.valid_from and data.valid_to and data.valid_to < data.valid_from:
        fields["valid_to"] = N_("Must not be before valid_from.")
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        if await session.get(Patient, patient_id) is None:
            raise NotFound(N_("Patient not found."))
        refs = await _check_refs(session, data)
        if refs:
            raise ValidationFailed(fields=refs)
        policy = InsurancePolicy(patient_id=patient_id, network={}, exclusions={})
        _apply(policy, data)
        session.add(policy)
        await session.flush()
        after = policy_json(policy)
        record_change(
            session, actor, at=now, action="admin.policy-created", entity="policy", entity_id=policy.id,
            before=None, after=after,
        )  # fmt: skip
        uow.emit(clinic_changed())  # the coverage Review and Approve shows
    return after


async def update_policy(rt: Runtime, actor: Actor, policy_id: int, data: PolicyInput) -> dict[str, Any]:
    """Edit a policy; omitted fields stay."""
    fields = _check_values(data)
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        policy = (
            await session.execute(select(InsurancePolicy).where(InsurancePolicy.id == policy_id).with_for_update())
        ).scalar_one_or_none()
        if policy is None:
            raise NotFound(N_("Policy not found."))
        refs = await _check_refs(session, data)
        if refs:
            raise ValidationFailed(fields=refs)
        before = policy_json(policy)
        merged = replace(
            data,
            valid_from=data.valid_from or policy.valid_from,
            valid_to=data.valid_to or policy.valid_to,
        )
        if merged.valid_to is not None and merged.valid_from is not None and merged.valid_to < merged.valid_from:
            raise ValidationFailed(fields={"valid_to": N_("Must not be before valid_from.")})
        _apply(policy, data)
        await session.flush()
        after = policy_json(policy)
        record_change(
            session, actor, at=now, action="admin.policy-updated", entity="policy", entity_id=policy.id,
            before=before, after=after,
        )  # fmt: skip
        uow.emit(clinic_changed())  # the coverage Review and Approve shows
    return after
