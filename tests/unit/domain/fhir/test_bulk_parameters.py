"""The bulk export's kick-off parameters as rules (docs/fhir.md#bulk-export)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir.bulk import TYPES, Level, export_request, parse_since, wants_async
from doctordesk.domain.fhir.errors import NotSupported


def test_without_parameters_every_type_of_the_level_is_exported_in_its_order():
    assert export_request(Level.SYSTEM, []).types == TYPES[Level.SYSTEM]
    assert export_request(Level.GROUP, []).types == ("Patient", "Appointment")


def test_type_keeps_the_level_order_whatever_order_it_names_them_in():
    asked = export_request(Level.SYSTEM, [("_type", "Group,Patient"), ("_type", "Location")])
    assert asked.types == ("Patient", "Location", "Group")


@pytest.mark.parametrize("value", ["Observation", "Practitioner", "patient", "Patient,"])
def test_a_type_the_level_does_not_export_is_refused(value):
    with pytest.raises(NotSupported) as refused:
        export_request(Level.PATIENT, [("_type", value)])
    assert "_type" in refused.value.fields


@pytest.mark.parametrize("value", ["application/fhir+ndjson", "application/ndjson", "ndjson"])
def test_the_output_format_is_ndjson_in_any_of_its_spellings(value):
    assert export_request(Level.SYSTEM, [("_outputFormat", value)]).types


@pytest.mark.parametrize("value", ["application/json", "text/csv", "application/fhir+json", ""])
def test_any_other_output_format_is_refused(value):
    with pytest.raises(NotSupported):
        export_request(Level.SYSTEM, [("_outputFormat", value)])


def test_since_is_an_instant_with_its_offset_kept_in_utc():
    assert parse_since("2026-11-23T08:00:00+01:00") == datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
    assert parse_since("2026-11-23T07:00:00.123456789Z") == datetime(2026, 11, 23, 7, 0, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize(
    "value", ["2026-11-23", "2026-11-23T07:00:00", "2026-13-01T00:00:00Z", "0001-01-01T00:00:00Z", "now", ""]
)
def test_since_without_a_full_time_and_offset_or_out_of_range_is_refused(value):
    with pytest.raises(ValidationFailed) as refused:
        export_request(Level.SYSTEM, [("_since", value)])
    assert "_since" in refused.value.fields


def test_since_twice_is_refused():
    with pytest.raises(ValidationFailed):
        export_request(Level.SYSTEM, [("_since", "2026-11-23T07:00:00Z"), ("_since", "2026-11-24T07:00:00Z")])


@pytest.mark.parametrize("name", ["_typeFilter", "_elements", "patient", "includeAssociatedData"])
def test_a_parameter_not_supported_is_refused_not_ignored(name):
    with pytest.raises(NotSupported) as refused:
        export_request(Level.SYSTEM, [(name, "x")])
    assert name in refused.value.fields


@pytest.mark.parametrize(
    ("prefer", "wanted"),
    [("respond-async", True), ("handling=strict, respond-async", True), ("Respond-Async", True), (None, False),
     ("return=minimal", False)],
)  # fmt: skip
def test_the_kick_off_needs_prefer_respond_async(prefer, wanted):
    assert wants_async(prefer) is wanted
