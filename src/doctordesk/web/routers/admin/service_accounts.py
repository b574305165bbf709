"""Admin JSON API: service accounts of the integration API and their keys (admins only)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import ConfigDict, Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.integration import Scope
from doctordesk.domain.names import NAME_PATTERN, OPTIONAL_NAME_PATTERN
from doctordesk.domain.roles import Actor, Role
from doctordesk.services.integration import service_accounts
from doctordesk.web.bodies import StrictBody, stated
from doctordesk.web.deps import RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import ROLE_READ_RESPONSES, SUBMIT_RESPONSES

router = APIRouter(prefix="/admin", tags=["admin"])

AdminDep = Annotated[Actor, require_roles(Role.ADMIN)]
AccountId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]


class AccountIn(StrictBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    # White space around the name is dropped: it needs something besides white space.
    name: str = Field(
        min_length=1,
        max_length=100,
        description="Unique, e.g. the system's name",
        json_schema_extra=stated(pattern=NAME_PATTERN),
    )
    description: str = Field(default="", max_length=500)


class KeyIn(StrictBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    scopes: list[Scope] = Field(min_length=1, max_length=len(Scope), description="What the key may do")
    label: str = Field(
        default="",
        max_length=100,
        description="A note to tell keys apart",
        json_schema_extra=stated(pattern=OPTIONAL_NAME_PATTERN),
    )


def key_json(key: service_accounts.KeyInfo) -> dict[str, Any]:
    return {
        "id": key.id,
        "prefix": key.prefix,
        "label": key.label,
        "scopes": list(key.scopes),
        "created_at": key.created_at.isoformat(),
        "last_used_at": key.last_used_at.isoformat() if key.last_used_at else None,
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
    }


def account_json(account: service_accounts.AccountInfo) -> dict[str, Any]:
    return {
        "id": account.id,
        "name": account.name,
        "description": account.description,
        "active": account.active,
        "created_at": account.created_at.isoformat(),
        "keys": [key_json(k) for k in account.keys],
    }


@router.post("/service-accounts", status_code=201, responses=SUBMIT_RESPONSES)
async def create_account(rt: RuntimeDep, actor: AdminDep, body: AccountIn) -> dict[str, Any]:
    """Create a service account (a clinic system that calls the integration API). It has no key yet."""
    return account_json(await service_accounts.create_account(rt, actor, name=body.name, description=body.description))


@router.get("/service-accounts", responses=ROLE_READ_RESPONSES)
async def list_accounts(rt: RuntimeDep, actor: AdminDep) -> dict[str, Any]:
    """Every service account with its keys (prefix, scopes, last use, revocation; never the key itself)."""
    return {"service_accounts": [account_json(a) for a in await service_accounts.list_accounts(rt, actor)]}


@router.get("/service-accounts/{account_id}", responses=ROLE_READ_RESPONSES)
async def get_account(rt: RuntimeDep, actor: AdminDep, account_id: AccountId) -> dict[str, Any]:
    """One service account with its keys."""
    return account_json(await service_accounts.get_account(rt, actor, account_id))


@router.post("/service-accounts/{account_id}/deactivate", responses=SUBMIT_RESPONSES)
async def deactivate_account(rt: RuntimeDep, actor: AdminDep, account_id: AccountId) -> dict[str, Any]:
    """Deactivate a service account: every key of it is refused (401) from the next request on, on every
    instance. Its keys stay listed; reactivating makes the unrevoked ones work again."""
    return account_json(await service_accounts.set_active(rt, actor, account_id, active=False))


@router.post("/service-accounts/{account_id}/reactivate", responses=SUBMIT_RESPONSES)
async def reactivate_account(rt: RuntimeDep, actor: AdminDep, account_id: AccountId) -> dict[str, Any]:
    """Reactivate a service account: its keys that were not revoked work again."""
    return account_json(await service_accounts.set_active(rt, actor, account_id, active=True))


@router.post("/service-accounts/{account_id}/keys", status_code=201, responses=SUBMIT_RESPONSES)
async def issue_key(rt: RuntimeDep, actor: AdminDep, account_id: AccountId, body: KeyIn) -> dict[str, Any]:
    """Issue an API key with the given scopes. The answer's `key` is shown this once: only its hash is kept."""
    new = await service_accounts.issue_key(rt, actor, account_id, scopes=body.scopes, label=body.label)
    return {**key_json(new.info), "key": new.key}


@router.delete("/service-accounts/{account_id}/keys/{key_id}", responses=SUBMIT_RESPONSES)
async def revoke_key(
    rt: RuntimeDep, actor: AdminDep, account_id: AccountId, key_id: Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]
) -> dict[str, Any]:
    """Revoke a key: it is refused from the next request on. The key stays listed, with `revoked_at`."""
    return key_json(await service_accounts.revoke_key(rt, actor, account_id, key_id))
