"""Administration API: users and doctor profiles (role admin only; everyone else gets 403)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import Field

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.mail.addresses import ADDRESS_PATTERN
from doctordesk.domain.mail.addresses import MAX_CHARS as MAX_ADDRESS
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import TIMEZONES
from doctordesk.services.accounts import password_links
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.services.admin import users as admin_users
from doctordesk.services.admin.users import (
    USERNAME_PATTERN,
    DoctorChange,
    NewUser,
    UserView,
)
from doctordesk.web.bodies import stated
from doctordesk.web.deps import ActorDep, RuntimeDep, require_roles
from doctordesk.web.params import STRICT_ID, strict_int
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin.models import Strict

# Time zones: the IANA names the service knows (domain/scheduling/suggestions.py), stated in /openapi.json.
ZONES: dict[str, Any] = {"enum": list(TIMEZONES)}
ZONES_OR_NULL: dict[str, Any] = {"enum": [*TIMEZONES, None]}
router = APIRouter(
    prefix="/admin", tags=["administration"], dependencies=[require_roles(Role.ADMIN)], responses=SUBMIT_RESPONSES
)

RoleName = Literal["doctor", "support", "patient", "admin"]
UserId = Annotated[int, Path(ge=1, le=MAX_ID), STRICT_ID]


# The rules the service judges itself (its messages, in the reader's language), stated from its own constants.
NAME = stated(pattern=NAME_PATTERN)
PASSWORD = stated(minLength=MIN_PASSWORD)
# An address's shape as the schema states it (one @, no white space; empty clears it); the service checks the rest
# (``domain/mail/addresses``) and names the field when it is not an address.
ADDRESS = stated(pattern=ADDRESS_PATTERN)


class UserCreate(Strict):
    username: str = Field(
        min_length=1,
        max_length=64,
        description="Letters, digits, '.', '_', '-', starting with a letter or digit; stored in lowercase",
        json_schema_extra=stated(pattern=USERNAME_PATTERN),
    )
    role: RoleName
    display_name: str = Field(min_length=1, max_length=128, json_schema_extra=NAME)
    password: str | None = Field(
        None,
        max_length=MAX_PASSWORD,
        description=f"{MIN_PASSWORD} to {MAX_PASSWORD} characters; omit to have one generated and shown once",
        json_schema_extra=PASSWORD,
    )
    specialty: str | None = Field(None, max_length=64, description="Doctors only", json_schema_extra=NAME)
    timezone: str | None = Field(None, description="Doctors only: IANA time zone", json_schema_extra=ZONES_OR_NULL)
    can_prescribe: bool | None = Field(None, description="Doctors only (default true)")
    chat_enabled: bool | None = Field(None, description="Doctors only (default true)")
    email: str | None = Field(
        None,
        max_length=MAX_ADDRESS,
        description="Patients only: where the clinic's mail reaches them",
        json_schema_extra=ADDRESS,
    )


class UserUpdate(Strict):
    display_name: str = Field(min_length=1, max_length=128, json_schema_extra=NAME)


class PasswordSet(Strict):
    password: str | None = Field(
        None,
        max_length=MAX_PASSWORD,
        description=f"{MIN_PASSWORD} to {MAX_PASSWORD} characters; omit to have one generated and shown once",
        json_schema_extra=PASSWORD,
    )
    keep_factors: bool = Field(
        False, description="Keep the user's passkeys and authenticator app (by default they are removed too)"
    )


class DoctorUpdate(Strict):
    display_name: str | None = Field(None, min_length=1, max_length=128, json_schema_extra=NAME)
    specialty: str | None = Field(None, min_length=1, max_length=64, json_schema_extra=NAME)
    timezone: str | None = Field(None, json_schema_extra=ZONES_OR_NULL)
    can_prescribe: bool | None = None
    chat_enabled: bool | None = None


class PatientUpdate(Strict):
    email: str | None = Field(
        ...,
        max_length=MAX_ADDRESS,
        description="The patient's email address; null or empty: none (no mail)",
        json_schema_extra=ADDRESS,
    )


def user_json(user: UserView) -> dict[str, Any]:
    data = asdict(user)
    data["created_at"] = user.created_at.isoformat()
    return data


def passwords(request: Request) -> Any:
    return request.app.state.passwords


@router.get("/users")
async def list_users(
    rt: RuntimeDep,
    role: Annotated[RoleName | None, Query(description="Only this role")] = None,
    active: Annotated[bool | None, Query(description="Only active (true) or deactivated (false) users")] = None,
    after: Annotated[int | None, Query(ge=1, le=MAX_ID, description="The previous page's `next`"), STRICT_ID] = None,
    limit: Annotated[int, Query(ge=1, le=500), strict_int(minimum=1, maximum=500)] = 100,
) -> dict[str, Any]:
    """Users by id, one page at a time; `next` continues the list (null on the last page)."""
    views, next_id = await admin_users.list_users(
        rt, role=Role(role) if role else None, active=active, after_id=after, limit=limit
    )
    return {"users": [user_json(v) for v in views], "next": next_id}


@router.post("/users", status_code=201)
async def create_user(request: Request, rt: RuntimeDep, actor: ActorDep, body: UserCreate) -> dict[str, Any]:
    """Create a doctor, support agent, patient or admin. Without `password` one is generated and returned in
    `password` this once (it is stored only as a hash)."""
    fields = body.model_dump(exclude={"role"})
    view, generated = await admin_users.create_user(
        rt, passwords(request), actor, NewUser(role=Role(body.role), **fields)
    )
    return {"user": user_json(view), "password": generated}


@router.get("/users/{user_id}")
async def get_user(rt: RuntimeDep, user_id: UserId) -> dict[str, Any]:
    """One user (404 when unknown)."""
    return user_json(await admin_users.get_user(rt, user_id))


@router.post("/users/{user_id}")
async def update_user(rt: RuntimeDep, actor: ActorDep, user_id: UserId, body: UserUpdate) -> dict[str, Any]:
    """Change a user's display name. The role of an account is fixed: create a new account for another role."""
    return user_json(await admin_users.rename_user(rt, actor, user_id, display_name=body.display_name))


@router.post("/users/{user_id}/deactivate")
async def deactivate_user(rt: RuntimeDep, actor: ActorDep, user_id: UserId) -> dict[str, Any]:
    """Deactivate a user: their tokens stop working at once (401), their open streams close on every instance and
    their login is refused. Nothing of theirs is deleted."""
    return user_json(await admin_users.set_active(rt, actor, user_id, active=False))


@router.post("/users/{user_id}/reactivate")
async def reactivate_user(rt: RuntimeDep, actor: ActorDep, user_id: UserId) -> dict[str, Any]:
    """Let a deactivated user log in again. Nothing ended by the deactivation comes back: sessions, apps' tokens
    and push registrations stay ended."""
    return user_json(await admin_users.set_active(rt, actor, user_id, active=True))


@router.post("/users/{user_id}/password")
async def set_password(
    request: Request, rt: RuntimeDep, actor: ActorDep, user_id: UserId, body: PasswordSet
) -> dict[str, Any]:
    """Set a user's password, or reset it to a generated one returned in `password` this once. Every way into the
    account ends either way (sessions, apps' tokens, push registrations), and its passkeys and authenticator app
    are removed unless `keep_factors` (docs/accounts.md#recovery)."""
    generated = await admin_users.set_password(
        rt, passwords(request), actor, user_id, password=body.password, keep_factors=body.keep_factors
    )
    return {"password": generated}


@router.post("/users/{user_id}/password-link", status_code=201)
async def create_password_link(
    request: Request, response: Response, rt: RuntimeDep, actor: ActorDep, user_id: UserId
) -> dict[str, Any]:
    """A one-time link through which the user sets their own password, returned in `url` this once (only its
    hash is stored). It works once, for 24 hours, while the user is active; a newer link voids it."""
    link = await password_links.create_link(rt, actor, user_id)
    response.headers["Cache-Control"] = "no-store"
    return {"user_id": user_id, "url": link.url(str(request.base_url)), "expires_at": link.expires_at.isoformat()}


@router.post("/patients/{user_id}")
async def update_patient(rt: RuntimeDep, actor: ActorDep, user_id: UserId, body: PatientUpdate) -> dict[str, Any]:
    """Set or clear a patient's email address (docs/notifications.md); 404 when the user is not a patient."""
    return user_json(await admin_users.update_patient(rt, actor, user_id, email=body.email))


@router.post("/doctors/{user_id}")
async def update_doctor(rt: RuntimeDep, actor: ActorDep, user_id: UserId, body: DoctorUpdate) -> dict[str, Any]:
    """Edit a doctor's profile: name, specialty, time zone, can-prescribe, chat enabled (omitted fields stay)."""
    change = DoctorChange(**body.model_dump())
    return user_json(await admin_users.update_doctor(rt, actor, user_id, change))
