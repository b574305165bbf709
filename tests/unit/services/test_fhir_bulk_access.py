"""Who may export what (docs/fhir.md#bulk-export): ``services/fhir/bulk/access.authorize_export`` by role, by
API key scope and by a SMART token's scopes per resource type."""

from __future__ import annotations

import pytest

from doctordesk.domain.errors import Forbidden, NotFound
from doctordesk.domain.fhir.bulk import TYPES, Level
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.smart.scopes import Ceiling
from doctordesk.services.fhir.bulk.access import authorize_export, groups_visible, requester

EVERYTHING = TYPES[Level.SYSTEM]


def _actor(role: Role, user_id: int = 7, **changes) -> Actor:
    return Actor(user_id=user_id, username="u", role=role, display_name="U", **changes)


def _key(*scopes: Scope) -> Integration:
    return Integration(service_account_id=3, name="his", key_id=9, scopes=frozenset(scopes))


@pytest.mark.parametrize("role", [Role.ADMIN, Role.SUPPORT])
def test_admins_and_support_export_the_clinic_at_every_level(role):
    for level in Level:
        authorize_export(_actor(role), level=level, types=TYPES[level], group_id=1 if level is Level.GROUP else None)


def test_a_doctor_exports_only_their_own_panel():
    doctor = _actor(Role.DOCTOR, user_id=7)
    authorize_export(doctor, level=Level.GROUP, types=TYPES[Level.GROUP], group_id=7)
    with pytest.raises(NotFound):
        authorize_export(doctor, level=Level.GROUP, types=TYPES[Level.GROUP], group_id=8)
    for level in (Level.SYSTEM, Level.PATIENT):
        with pytest.raises(Forbidden):
            authorize_export(doctor, level=level, types=TYPES[level])
    assert groups_visible(doctor) == frozenset({7})


def test_a_patient_is_refused_at_every_level():
    for level in Level:
        with pytest.raises(Forbidden):
            authorize_export(_actor(Role.PATIENT, patient_id=1), level=level, types=(), group_id=7)


def test_an_api_key_needs_appointments_read():
    authorize_export(_key(Scope.APPOINTMENTS_READ), level=Level.SYSTEM, types=EVERYTHING)
    with pytest.raises(Forbidden):
        authorize_export(_key(Scope.APPOINTMENTS_WRITE), level=Level.SYSTEM, types=EVERYTHING)
    assert groups_visible(_key(Scope.APPOINTMENTS_WRITE)) == frozenset()


def test_through_a_smart_token_every_type_needs_read_and_search():
    admin = _actor(Role.ADMIN, ceiling=Ceiling(("user/*.rs",)))
    authorize_export(admin, level=Level.SYSTEM, types=EVERYTHING)
    narrow = _actor(Role.ADMIN, ceiling=Ceiling(("user/Appointment.rs", "user/Patient.r")))
    authorize_export(narrow, level=Level.SYSTEM, types=("Appointment",))
    with pytest.raises(Forbidden):
        authorize_export(narrow, level=Level.SYSTEM, types=("Appointment", "Patient"))  # Patient lacks s


def test_a_token_narrowed_to_a_launch_patient_may_not_export():
    doctor = _actor(Role.DOCTOR, patient_context=1, ceiling=Ceiling(("patient/*.rs",), 1))
    with pytest.raises(Forbidden):
        authorize_export(doctor, level=Level.GROUP, types=("Patient",), group_id=7)


def test_a_job_belongs_to_the_user_or_the_service_account():
    assert requester(_actor(Role.ADMIN, user_id=5)) == "user:5"
    assert requester(_key(Scope.APPOINTMENTS_READ)) == "account:3"
