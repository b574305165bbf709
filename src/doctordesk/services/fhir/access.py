"""Who sees what through the FHIR interface (docs/fhir.md#access), in one place: the same rights as everywhere
(a doctor their own appointments, a patient their own, support and admins all) for user tokens; for API keys, the
integration API's scopes (``appointments:read``: every appointment; only ``appointments:write``: the ones the
service account created). Whatever a caller may not see is 404, as an unknown id."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, exists, select

from doctordesk.domain.errors import Forbidden
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.services.appointments.reading import patients_visible_to, visible_to
from doctordesk.store.integration_tables import IntegrationRequest
from doctordesk.store.tables import Appointment, Patient

Caller = Actor | Integration
AnySelect = TypeVar("AnySelect", bound=Select[*tuple[Any, ...]])


def require_some_scope(caller: Caller) -> None:
    if isinstance(caller, Integration) and not (
        caller.has(Scope.APPOINTMENTS_READ) or caller.has(Scope.APPOINTMENTS_WRITE)
    ):
        raise Forbidden(N_("This API key lacks the scope appointments:read."))


def _created_by(caller: Integration) -> Any:
    return Appointment.id.in_(
        select(IntegrationRequest.appointment_id).where(
            IntegrationRequest.service_account_id == caller.service_account_id
        )
    )


def appointments_visible(query: AnySelect, caller: Caller) -> AnySelect:
    """``query`` (over appointments) narrowed to those ``caller`` may see."""
    if isinstance(caller, Actor):
        return visible_to(query, caller)
    require_some_scope(caller)
    if caller.has(Scope.APPOINTMENTS_READ):
        return query
    return query.where(_created_by(caller))


def patients_visible(query: AnySelect, caller: Caller) -> AnySelect:
    """``query`` (over patients) narrowed to those ``caller`` may see: a user's as everywhere
    (``patients_visible_to``), a write-only key the patients of the requests it made."""
    if isinstance(caller, Actor):
        return patients_visible_to(query, caller)
    require_some_scope(caller)
    if caller.has(Scope.APPOINTMENTS_READ):
        return query
    theirs = select(Appointment.id).where(Appointment.patient_id == Patient.id, _created_by(caller))
    return query.where(exists(theirs))
