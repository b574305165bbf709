"""The strict check of one import row: typed values, or every problem with its field."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pytest

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.transfer.import_rows import FIELDS, Kind, check_row

APPOINTMENT = {
    "external_id": "A-1",
    "patient": "P-1",
    "doctor": "D-1",
    "location": "L-1",
    "start": "2026-11-25T09:30:00+01:00",
    "duration_minutes": "45",
    "status": "approved",
}


def problems(kind: Kind, raw: dict) -> dict[str, str]:
    return {p.field: p.reason for p in check_row(kind, 7, raw).problems}


def test_a_good_appointment_row_gives_typed_values_and_defaults():
    row = check_row(Kind.APPOINTMENTS, 3, APPOINTMENT)
    assert row.ok and row.line == 3
    assert row.values["start"] == datetime(2026, 11, 25, 8, 30, tzinfo=UTC)
    assert row.values["duration_minutes"] == 45 and row.values["status"] is Status.APPROVED
    assert row.values["service"] == "consultation" and row.values["chat_enabled"] is True
    assert row.references() == [
        ("patient", Kind.PATIENTS, "P-1"),
        ("doctor", Kind.DOCTORS, "D-1"),
        ("location", Kind.LOCATIONS, "L-1"),
    ]


def test_every_bad_field_of_a_row_is_reported_with_its_reason():
    raw = {**APPOINTMENT, "start": "2026-11-25T09:30:00", "duration_minutes": "٣٠", "status": "5", "extra": "x"}
    del raw["doctor"]
    found = problems(Kind.APPOINTMENTS, raw)
    assert set(found) == {"start", "duration_minutes", "status", "doctor", "extra"}
    assert "offset" in found["start"]
    assert "ASCII digits" in found["duration_minutes"]
    assert "pending-response" in found["status"]  # statuses by public name only
    assert found["doctor"] == "required" and "not a field" in found["extra"]


@pytest.mark.parametrize("value", ["Europe/Berlin", "America/Argentina/Buenos_Aires", "UTC"])
def test_an_iana_time_zone_name_is_accepted(value):
    assert check_row(Kind.LOCATIONS, 2, {"external_id": "L", "name": "X", "timezone": value}).ok


@pytest.mark.parametrize("value", ["CET+1", "Berlin", "+01:00", "europe/berlin", ""])
def test_a_time_zone_that_is_not_an_iana_name_is_refused(value):
    assert "timezone" in problems(Kind.LOCATIONS, {"external_id": "L", "name": "X", "timezone": value})


@pytest.mark.parametrize("name", ["Clinic\x00", "Clinic\u200b", "Clinic\u2028Two", " Clinic", "C" * 129, "Clinic\n"])
def test_control_characters_padding_and_overlong_text_are_refused(name):
    assert "name" in problems(Kind.LOCATIONS, {"external_id": "L", "name": name, "timezone": "UTC"})


def test_raw_third_party_data_keeps_its_spacing_and_line_breaks():
    row = check_row(
        Kind.POLICIES,
        2,
        {
            "external_id": "PO",
            "patient": "P",
            "insurer": "I",
            "policy_number": "N",
            "valid_from": "2026-01-01",
            "valid_to": "2026-12-31",
            "third_party_data": '{"plan":\n ',
        },
    )
    assert row.ok and row.values["third_party_data"] == '{"plan":\n '


@pytest.mark.parametrize("value", ["2026-02-30", "2026-1-01", "20260101", "２０２６-01-01"])
def test_dates_are_real_iso_dates_in_ascii_digits(value):
    raw = {"external_id": "P", "name": "N", "birth_date": value}
    assert "birth_date" in problems(Kind.PATIENTS, raw)


def test_a_birth_date_is_a_date():
    assert check_row(Kind.PATIENTS, 2, {"external_id": "P", "name": "N", "birth_date": "1984-03-02"}).values[
        "birth_date"
    ] == date(1984, 3, 2)


def test_work_hours_end_after_they_start_on_a_named_weekday():
    base = {"external_id": "H", "doctor": "D", "location": "L", "weekday": "tuesday", "start": "09:00", "end": "13:00"}
    row = check_row(Kind.HOURS, 2, base)
    assert row.ok and row.values["weekday"] == 1 and row.values["start"] == time(9, 0)
    assert problems(Kind.HOURS, {**base, "end": "08:00"}) == {"end": "must be after start"}
    assert "weekday" in problems(Kind.HOURS, {**base, "weekday": "1"})
    assert "start" in problems(Kind.HOURS, {**base, "start": "9:00"})


def test_a_policy_ends_on_or_after_it_starts_and_its_lists_are_external_ids():
    base = {
        "external_id": "PO",
        "patient": "P",
        "insurer": "I",
        "policy_number": "N",
        "valid_from": "2026-01-01",
        "valid_to": "2026-12-31",
        "network_doctors": "D-1;D-2",
        "excluded_services": ["teledermatology"],
    }
    row = check_row(Kind.POLICIES, 2, base)
    assert row.ok and row.values["network_doctors"] == ("D-1", "D-2")
    assert row.values["excluded_services"] == ("teledermatology",)
    assert ("network_doctors", Kind.DOCTORS, "D-2") in row.references()
    assert "valid_to" in problems(Kind.POLICIES, {**base, "valid_to": "2025-12-31"})
    assert "network_doctors" in problems(Kind.POLICIES, {**base, "network_doctors": "D-1;D-1"})
    assert "excluded_services" in problems(Kind.POLICIES, {**base, "excluded_services": ["a;b"]})


@pytest.mark.parametrize("value", ["", "-x", "a b", "é", "x" * 65])
def test_an_external_id_is_short_plain_ascii(value):
    assert "external_id" in problems(Kind.PATIENTS, {"external_id": value, "name": "N"})


def test_a_doctor_username_is_lower_case_and_booleans_are_true_or_false():
    base = {"external_id": "D", "username": "dr.x", "name": "Dr X", "specialty": "GP", "can_prescribe": "false"}
    row = check_row(Kind.DOCTORS, 2, base)
    assert row.ok and row.values["can_prescribe"] is False and row.values["timezone"] is None
    assert "username" in problems(Kind.DOCTORS, {**base, "username": "Dr.X"})
    assert "can_prescribe" in problems(Kind.DOCTORS, {**base, "can_prescribe": "yes"})


def test_an_offset_beyond_fourteen_hours_is_refused():
    assert "start" in problems(Kind.APPOINTMENTS, {**APPOINTMENT, "start": "2026-11-25T09:30:00+15:00"})


def test_every_kind_has_an_external_id_field_first():
    assert all(next(iter(fields)) == "external_id" for fields in FIELDS.values())


@pytest.mark.parametrize(
    "start",
    ["2026-11-25 09:30:00+01:00", "2026-11-25t09:30:00+01:00", "2026-11-25T09:30:00+01:99", "2026-11-25T09:30:00+0100",
     "1790000000", "2026-11-25T24:00:00Z", "2026-11-25T23:59:60Z", "2026-11-25T09:30+01:00", "2026-11-25"],
)  # fmt: skip
def test_an_imported_start_is_read_as_every_door_reads_an_instant(start):
    assert "start" in problems(Kind.APPOINTMENTS, {**APPOINTMENT, "start": start})


@pytest.mark.parametrize("value", ["24:00", "09:00:00", "23:60", "9:00", "0900", "09:00Z"])
def test_imported_hours_are_read_as_every_door_reads_a_wall_time(value):
    base = {"external_id": "H", "doctor": "D", "location": "L", "weekday": "tuesday", "start": "09:00", "end": "13:00"}
    assert "start" in problems(Kind.HOURS, {**base, "start": value})


@pytest.mark.parametrize("day", ["2026-01-01T00:00:00Z", "2026-01-01 00:00", "20260101", "2026-W01-4"])
def test_an_imported_day_takes_only_a_day(day):
    assert "birth_date" in problems(Kind.PATIENTS, {"external_id": "P", "name": "N", "birth_date": day})
