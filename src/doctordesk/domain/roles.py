"""Who uses the service."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from doctordesk.domain.errors import Forbidden, NotFound
from doctordesk.domain.smart.scopes import Ceiling


class Role(StrEnum):
    DOCTOR = "doctor"
    SUPPORT = "support"
    PATIENT = "patient"
    ADMIN = "admin"


@dataclass(frozen=True, slots=True)
class Actor:
    """The authenticated user behind a request."""

    user_id: int
    username: str
    role: Role
    display_name: str
    token_id: int | None = None
    patient_id: int | None = None
    language: str | None = None  # the stored choice (en, de); None: the request's Accept-Language decides
    # A SMART launch's patient when only ``patient/`` scopes allow the request: what the actor sees is narrowed to
    # that patient, beneath their own rights (docs/smart.md#scopes). None: no such narrowing.
    patient_context: int | None = None
    # A SMART token's scopes, which also bound what a search brings along (``_include``); None: not an app's token.
    ceiling: Ceiling | None = None
    # A SMART backend service (docs/smart.md#backend-services): its client id. Such an actor is no user
    # (``user_id`` 0, which no user has) and reads as support does, the whole clinic, beneath its ``system/``
    # scopes (``ceiling``), which allow reading and searching only. None: a user.
    system_client: str | None = None

    @property
    def is_system(self) -> bool:
        return self.system_client is not None

    @property
    def is_doctor(self) -> bool:
        return self.role is Role.DOCTOR

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN


def require_admin(caller: object, *, hidden: bool = False, message: str | None = None) -> None:
    """The one rule for "admins only": ``caller`` is a user (an ``Actor``; an API key or anything else never is)
    whose role is admin. Anyone else is refused with ``Forbidden`` (403), or with ``NotFound`` (404) when
    ``hidden``: where a non-admin is not to learn that the thing exists (an administration screen answers as a
    screen that is not theirs). ``message`` replaces the error's default text. Every admin check of the services
    goes through here (docs/architecture.md#one-door-per-rule)."""
    if isinstance(caller, Actor) and caller.role is Role.ADMIN:
        return
    raise NotFound(message) if hidden else Forbidden(message)
