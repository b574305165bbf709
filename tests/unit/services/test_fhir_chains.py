"""Chained parameters and ``$everything``'s ``_type`` as read before any query (docs/fhir.md#chained-parameters,
docs/fhir.md#everything): the chains offered are the targets' own parameters with their modifiers, the typed form
reads as the plain one, and ``_type`` keeps the types this operation holds."""

from __future__ import annotations

import pytest

from doctordesk.domain.errors import ValidationFailed
from doctordesk.services.fhir import chains, everything
from doctordesk.services.fhir import directory as fhir_directory
from doctordesk.services.fhir import people as fhir_people
from doctordesk.services.fhir.search import Search, check


def search(*items: tuple[str, str], strict: bool = False) -> Search:
    return Search("http://host/fhir", "Appointment", list(items), strict=strict)


def test_the_chains_are_each_targets_parameters_and_take_its_modifiers():
    offered = set(chains.parameters())
    assert {f"patient.{p}" for p in fhir_people.PATIENT_PARAMETERS} <= offered
    assert {f"practitioner.{p}" for p in fhir_people.PRACTITIONER_PARAMETERS} <= offered
    assert {f"location.{p}" for p in fhir_directory.LOCATION_PARAMETERS} <= offered
    assert len(offered) == 6 + 3 + 2
    assert chains.modifiers()["patient.given"] == fhir_people.PATIENT_MODIFIERS["given"]
    assert chains.chains_of("actor") == [] and chains.chains_of("location") == ["_id", "name"]


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("patient:Patient.name", "patient.name"),
        ("practitioner:Practitioner.identifier:not", "practitioner.identifier:not"),
        ("location:Location._id", "location._id"),
        ("patient:Practitioner.name", "patient:Practitioner.name"),  # another type: left as sent (unknown)
        ("patient.name:exact", "patient.name:exact"),
        ("status:not", "status:not"),
    ],
)
def test_the_typed_form_reads_as_the_plain_chain(sent, read):
    assert chains.untyped(search((sent, "x"))).items == [(read, "x")]


def test_a_chain_is_known_only_one_level_deep_with_its_targets_modifiers():
    known = (*chains.parameters(),)
    checked = check(
        search(("patient.name:exact", "A"), ("patient.given:missing", "true"), ("patient.x.name", "y")),
        known,
        modifiers=chains.modifiers(),
    )
    assert set(checked.params) == {"patient.name:exact", "patient.given:missing"}
    assert [w["expression"] for w in checked.warnings] == [["patient.x.name"]]


@pytest.mark.parametrize(
    ("items", "kinds", "others", "kept"),
    [
        ([], set(everything.TYPES), [], None),
        ([("_type", "Appointment,Slot")], {"Appointment"}, ["Slot"], "Appointment"),
        ([("_type", "Patient"), ("_type", "Location,Patient")], {"Patient", "Location"}, [], "Patient,Location"),
        ([("_type", "Slot")], set(), ["Slot"], None),
    ],
)
def test_type_keeps_the_types_of_everything_and_names_the_others(items, kinds, others, kept):
    request, shown, ignored = everything._types(search(*items))
    assert shown == kinds and ignored == others
    assert request.values("_type") == ([kept] if kept else [])


def test_an_empty_type_is_refused():
    with pytest.raises(ValidationFailed):
        everything._types(search(("_type", ",")))
