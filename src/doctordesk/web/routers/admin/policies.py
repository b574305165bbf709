"""Administration API: insurers, patients' policies, coverage periods, network membership and exclusions (role
admin only)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.roles import Role
from doctordesk.services.admin import policies as admin_policies
from doctordesk.services.admin.policies import MAX_RECORD_CHARS, PolicyInput
from doctordesk.web.bodies import stated
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID, Day
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin.models import Strict

router = APIRouter(
    prefix="/admin", tags=["administration"], dependencies=[require_roles(Role.ADMIN)], responses=SUBMIT_RESPONSES
)

Id = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
Ids = list[Annotated[int, Field(ge=1, le=MAX_ID)]]
# Names are counted without the white space around them: something besides white space.
NAME = stated(pattern=NAME_PATTERN)


class Network(Strict):
    doctors: Ids | None = Field(None, max_length=1000, description="In-network doctors; empty: any")
    locations: Ids | None = Field(None, max_length=1000, description="In-network locations; empty: any")


class Exclusions(Strict):
    services: list[Annotated[str, Field(min_length=1, max_length=64, json_schema_extra=NAME)]] | None = Field(
        None, max_length=100
    )
    doctors: Ids | None = Field(None, max_length=1000, description="Doctors the policy forbids")


class PolicyBody(Strict):
    """An edit: omitted fields stay as they are."""

    insurer: str | None = Field(None, min_length=1, max_length=128, json_schema_extra=NAME)
    policy_number: str | None = Field(None, min_length=1, max_length=64, json_schema_extra=NAME)
    valid_from: Day | None = None
    valid_to: Day | None = Field(None, description="Not before valid_from")
    network: Network | None = None
    exclusions: Exclusions | None = None
    third_party_data: str | None = Field(
        None, max_length=MAX_RECORD_CHARS, description="The insurer's record as received"
    )
    clear_third_party_data: bool = False

    def to_input(self) -> PolicyInput:
        network, exclusions = self.network or Network(), self.exclusions or Exclusions()
        return PolicyInput(
            insurer=self.insurer,
            policy_number=self.policy_number,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            network_doctors=network.doctors,
            network_locations=network.locations,
            excluded_services=exclusions.services,
            excluded_doctors=exclusions.doctors,
            third_party_data=self.third_party_data,
            clear_third_party_data=self.clear_third_party_data,
        )


@router.get("/insurers")
async def list_insurers(rt: RuntimeDep) -> dict[str, Any]:
    """The insurers named on policies, with their number of policies."""
    return {"insurers": await admin_policies.list_insurers(rt)}


@router.get("/patients/{patient_id}/policies")
async def list_policies(rt: RuntimeDep, patient_id: Id) -> dict[str, Any]:
    """A patient's policies; `third_party_status` says whether the insurer's record passes the rules."""
    return {"policies": await admin_policies.list_policies(rt, patient_id)}


class PolicyCreate(PolicyBody):
    """A new policy: insurer, number and period required."""

    insurer: str = Field(min_length=1, max_length=128, json_schema_extra=NAME)
    policy_number: str = Field(min_length=1, max_length=64, json_schema_extra=NAME)
    valid_from: Day
    valid_to: Day = Field(description="Not before valid_from")


@router.post("/patients/{patient_id}/policies", status_code=201)
async def create_policy(rt: RuntimeDep, actor: ActorDep, patient_id: Id, body: PolicyCreate) -> dict[str, Any]:
    """Add a policy (insurer, policy_number, valid_from and valid_to required)."""
    return await admin_policies.create_policy(rt, actor, patient_id, body.to_input())


@router.post("/policies/{policy_id}")
async def update_policy(rt: RuntimeDep, actor: ActorDep, policy_id: Id, body: PolicyBody) -> dict[str, Any]:
    """Edit a policy: period, network, exclusions, the insurer's record (omitted fields stay). Policies are not
    deleted: end one with `valid_to`."""
    return await admin_policies.update_policy(rt, actor, policy_id, body.to_input())
