"""SMART v2 scopes: the grammar, what an app's allowed scopes cover, and which FHIR interaction needs which letter."""

from __future__ import annotations

import re

import pytest

from doctordesk.domain.smart import scopes
from doctordesk.domain.smart.clients import redirect_uri_problem


@pytest.mark.parametrize(
    "scope", ["patient/Appointment.rs", "user/Appointment.cruds", "patient/*.r", "openid", "launch/patient"]
)
def test_v2_and_plain_scopes_are_known(scope: str) -> None:
    assert scopes.is_known(scope)


@pytest.mark.parametrize(
    "scope", ["patient/Appointment.read", "user/Appointment.sr", "user/Appointment.rr", "patient/Appointment.", "x"]
)
def test_v1_scopes_letters_out_of_order_and_others_are_unknown(scope: str) -> None:
    assert not scopes.is_known(scope)


def test_an_allowed_scope_covers_a_narrower_request_only() -> None:
    allowed = ["user/Appointment.cruds", "patient/*.rs", "openid"]
    assert scopes.not_allowed(["user/Appointment.rs", "patient/Patient.r", "openid"], allowed) == []
    assert scopes.not_allowed(["patient/Appointment.c", "user/Patient.r", "fhirUser"], allowed) == [
        "patient/Appointment.c",
        "user/Patient.r",
        "fhirUser",
    ]


@pytest.mark.parametrize(
    ("method", "path", "needed"),
    [
        ("GET", "/Appointment", scopes.Interaction("Appointment", "s")),
        ("GET", "/Appointment/7", scopes.Interaction("Appointment", "r")),
        ("GET", "/Appointment/$find", scopes.Interaction("Appointment", "s")),  # free times: a search
        ("GET", "/Patient/7/$everything", scopes.Interaction("Patient", "r")),
        ("HEAD", "/Appointment/7/_history/2", scopes.Interaction("Appointment", "r")),
        ("POST", "/Appointment", scopes.Interaction("Appointment", "c")),
        ("PUT", "/Subscription/3", scopes.Interaction("Subscription", "u")),
        ("DELETE", "/Subscription/3", scopes.Interaction("Subscription", "d")),
        ("GET", "/metadata", None),
        ("GET", "/.well-known/smart-configuration", None),
    ],
)
def test_each_fhir_interaction_needs_its_letter(method: str, path: str, needed: scopes.Interaction | None) -> None:
    assert scopes.interaction(method, path) == needed


def test_patient_scopes_narrow_only_where_no_user_scope_allows() -> None:
    granted = ["patient/Appointment.rs", "user/Patient.rs"]
    read = scopes.Interaction("Appointment", "r")
    assert scopes.permits(granted, read) and scopes.patient_only(granted, read)
    patients = scopes.Interaction("Patient", "s")
    assert scopes.permits(granted, patients) and not scopes.patient_only(granted, patients)
    assert not scopes.permits(granted, scopes.Interaction("Appointment", "c"))


@pytest.mark.parametrize(
    ("uri", "ok"),
    [
        ("https://app.example.org/cb", True),
        ("http://127.0.0.1:8765/cb", True),
        ("http://[::1]:8765/cb", True),
        ("http://localhost/cb", False),  # RFC 8252 section 8.3: the loopback IP literal, not the name
        ("http://localhost:8765/cb", False),
        ("http://app.example.org/cb", False),
        ("https://app.example.org/cb#x", False),
        ("myapp://cb", False),
        ("https://user:pw@app.example.org/cb", False),
        ("https://app.example.org/c b", False),
        ("https://app.example.org/\u202ecb", False),
    ],
)
def test_redirect_uris_are_https_or_loopback_http(uri: str, ok: bool) -> None:
    assert (redirect_uri_problem(uri) is None) is ok


def test_an_operation_on_one_resource_is_an_update_and_on_a_type_a_create() -> None:
    assert scopes.interaction("POST", "/Appointment/7/$cancel") == scopes.Interaction("Appointment", "u")
    assert scopes.interaction("POST", "/Appointment/$hold") == scopes.Interaction("Appointment", "c")
    assert scopes.interaction("POST", "/Appointment/$book") == scopes.Interaction("Appointment", "c")


def test_the_ceiling_reads_a_type_only_with_its_read_letter_and_narrows_to_the_patient() -> None:
    ceiling = scopes.Ceiling(("patient/Appointment.rs", "patient/Patient.r", "user/Practitioner.rs"), patient_id=4)
    assert ceiling.may_read("Patient") and ceiling.may_read("Practitioner")
    assert not ceiling.may_read("Location") and not ceiling.may_read("AppointmentResponse")
    assert ceiling.patient_for("Patient") == 4 and ceiling.patient_for("Practitioner") is None
    assert not scopes.Ceiling(("user/Patient.s",)).may_read("Patient")


@pytest.mark.parametrize("scope", ["system/Appointment.rs", "system/*.rs", "system/Patient.r", "system/*.s", "launch"])
def test_system_scopes_that_read_or_search_and_the_ehr_launch_scope_are_known(scope: str) -> None:
    assert scopes.is_known(scope)
    assert re.fullmatch(scopes.SCOPE_PATTERN, scope)


@pytest.mark.parametrize("scope", ["system/Appointment.cruds", "system/*.c", "system/Appointment.rsu", "system/x.rs"])
def test_system_scopes_that_write_are_unknown(scope: str) -> None:
    assert not scopes.is_known(scope)
    assert not re.fullmatch(scopes.SCOPE_PATTERN, scope)


def test_a_system_scope_is_never_narrowed_to_a_patient_and_covers_narrower_system_scopes_only() -> None:
    read = scopes.Interaction("Appointment", "r")
    assert scopes.is_system("system/*.rs") and not scopes.is_system("user/*.rs")
    assert scopes.permits(["system/*.rs"], read) and not scopes.patient_only(["system/*.rs"], read)
    assert not scopes.permits(["system/*.rs"], scopes.Interaction("Appointment", "c"))
    assert scopes.not_allowed(["system/Appointment.s", "user/Appointment.s"], ["system/*.rs"]) == ["user/Appointment.s"]
    assert scopes.Ceiling(("system/Appointment.rs",)).may_read("Appointment")
    assert not scopes.Ceiling(("system/Appointment.rs",)).may_read("Patient")
