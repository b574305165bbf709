"""Who may export what (docs/fhir.md#bulk-export): the FHIR interface's rights (``services/fhir/access.py``) and
a SMART token's scopes by resource type (``domain/smart/scopes.permits``), decided in ``authorize_export``.

- A patient may not export (403): Bulk Data is for systems, and a patient's own data is a search away.
- A doctor exports only their own panel (``Group/<their id>/$export``); another doctor's Group is 404, as
  everywhere; the clinic and all patients are 403.
- Admins and support (who read everything), API keys with ``appointments:read``, and any other actor whose role
  reads the whole clinic (a system actor of SMART Backend Services) may export anything.
- Through a SMART token every exported type needs ``r`` and ``s`` in a granted scope (``user/*.rs``,
  ``system/*.rs``), and a token narrowed to a launch's patient may not export at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.errors import Forbidden, NotFound
from doctordesk.domain.fhir.bulk import Level
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart.scopes import Interaction, permits
from doctordesk.domain.texts import N_, Text
from doctordesk.services.fhir.access import Caller


def requester(caller: Caller) -> str:
    """Whose job it is: the user (through any of their tokens), the service account (through any of its keys) or the
    backend service (through any of its tokens; a system actor is no user: its ``user_id`` is 0 for every one)."""
    if isinstance(caller, Integration):
        return f"account:{caller.service_account_id}"
    if caller.system_client is not None:
        return f"system:{caller.system_client}"
    return f"user:{caller.user_id}"


def may_export_type(caller: Caller, resource_type: str) -> bool:
    """Whether ``caller``'s token scopes allow reading and searching every resource of ``resource_type`` (always,
    for a caller without SMART scopes: their role decides)."""
    if isinstance(caller, Integration) or caller.ceiling is None:
        return True
    granted = caller.ceiling.granted
    return permits(granted, Interaction(resource_type, "r")) and permits(granted, Interaction(resource_type, "s"))


def groups_visible(caller: Caller) -> frozenset[int] | None:
    """The doctors whose panel (Group) ``caller`` may read: None for all, else those ids (a doctor their own, a
    patient and a key without ``appointments:read`` none)."""
    if isinstance(caller, Integration):
        return None if caller.has(Scope.APPOINTMENTS_READ) else frozenset()
    if caller.role is Role.DOCTOR:
        return frozenset({caller.user_id})
    if caller.role is Role.PATIENT:
        return frozenset()
    return None


def authorize_export(caller: Caller, *, level: Level, types: Sequence[str], group_id: int | None = None) -> None:
    """Refuse an export ``caller`` may not run: 403 (``Forbidden``) for a patient, a doctor asking beyond their
    panel, a key without ``appointments:read`` or a token whose scopes do not cover every type; 404 for another
    doctor's Group. This is the one decision every kick-off goes through."""
    if isinstance(caller, Integration):
        if not caller.has(Scope.APPOINTMENTS_READ):
            raise Forbidden(N_("This API key lacks the scope appointments:read."))
        return
    _authorize_actor(caller, level=level, group_id=group_id)
    for resource_type in types:
        if not may_export_type(caller, resource_type):
            raise Forbidden(Text("The token's scopes do not allow exporting {kind}.", kind=resource_type))


def _authorize_actor(actor: Actor, *, level: Level, group_id: int | None) -> None:
    if actor.role is Role.PATIENT or actor.patient_context is not None:
        raise Forbidden(N_("Only the clinic's staff and systems may export data."))
    if actor.role is Role.DOCTOR:
        if level is not Level.GROUP:
            raise Forbidden(N_("A doctor exports their own patients: use Group/<your id>/$export."))
        if group_id != actor.user_id:
            raise NotFound(N_("Group not found."))
