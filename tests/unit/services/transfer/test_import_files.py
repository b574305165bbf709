"""Reading an import file ends in rows or in one FILE:LINE error, whatever the file holds: deep nesting, huge
numbers, bytes that are not UTF-8, NUL bytes, a second byte order mark, odd top-level values, huge CSV cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctordesk.domain.transfer.import_rows import Kind
from doctordesk.services.transfer.import_files import MAX_JSON_DEPTH, ImportFileError, read_rows

PATIENT = '{"external_id": "P-1", "name": "Maria"}'


def read(tmp_path: Path, name: str, content: str | bytes) -> list:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return read_rows(path)


def refused(tmp_path: Path, name: str, content: str | bytes) -> ImportFileError:
    with pytest.raises(ImportFileError) as caught:
        read(tmp_path, name, content)
    return caught.value


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_json_nested_deeper_than_the_limit_is_one_error_with_its_line_not_a_recursion_error(tmp_path, depth):
    error = refused(tmp_path, "patients.json", "[\n" + PATIENT + ",\n" + "[" * depth + "]" * depth + "\n]")
    assert error.line == 3 and f"nested more than {MAX_JSON_DEPTH} deep" in str(error)


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    rows = read(tmp_path, "patients.json", '[{"external_id": "P-1", "name": "' + "[{" * 5_000 + '\\"]"}]')
    assert len(rows) == 1 and rows[0].fields["name"].startswith("[{")


def test_a_value_nested_within_the_limit_is_a_bad_field_of_its_row(tmp_path):
    (row,) = read(tmp_path, "patients.json", '[{"external_id": "P-1", "name": [[["x"]]]}]')
    assert [(p.field, p.reason) for p in row.problems] == [("name", "a JSON list is not allowed here")]


@pytest.mark.parametrize("number", ["1" * 5_000, "-" + "9" * 30, "NaN", "Infinity", "-Infinity", "1e999", "1.5"])
def test_a_number_no_field_can_hold_is_a_bad_field_not_a_conversion_error(tmp_path, number):
    (row,) = read(tmp_path, "patients.json", f'[{{"external_id": "P-1", "name": {number}}}]')
    assert [p.field for p in row.problems] == ["name"]


def test_a_key_that_looks_like_an_internal_marker_is_just_an_unknown_field(tmp_path):
    (row,) = read(tmp_path, "patients.json", '[{"external_id": "P-1", "\\u0000twice": 5, "name": "A", "name": "B"}]')
    assert [(p.field, p.reason) for p in row.problems] == [("name", "given twice")]
    assert row.fields["\x00twice"] == "5"  # an unknown field, refused by the row check


def test_bytes_that_are_not_utf8_are_one_error_naming_their_line(tmp_path):
    error = refused(tmp_path, "patients.csv", b"external_id,name\nP-1,Maria\nP-2,M\xfcller\n")
    assert error.line == 3 and "not UTF-8" in str(error)


def test_nul_bytes_are_a_bad_value_in_csv_and_malformed_json(tmp_path):
    (row,) = read(tmp_path, "patients.csv", "external_id,name\nP-1,Ma\x00ria\n")
    assert row.fields["name"] == "Ma\x00ria"  # refused by the row check (a control character)
    assert "malformed JSON" in str(refused(tmp_path, "patients.json", '[{"external_id": "P-1", "name": "M\x00"}]'))


def test_one_byte_order_mark_is_allowed_and_a_second_is_part_of_the_header(tmp_path):
    (row,) = read(tmp_path, "patients.csv", "\ufeffexternal_id,name\nP-1,Maria\n".encode())
    assert row.fields == {"external_id": "P-1", "name": "Maria"}
    (row,) = read(tmp_path, "patients.csv", "\ufeff\ufeffexternal_id,name\nP-1,Maria\n".encode())
    assert "\ufeffexternal_id" in row.fields


@pytest.mark.parametrize(
    "content", ["5", '"patients"', "null", "true", "", "   ", '{"patients": {}}', '{"patients": 5}', '{"x": []}']
)
def test_a_document_of_the_wrong_shape_is_one_error(tmp_path, content):
    assert refused(tmp_path, "patients.json", content).line >= 1


@pytest.mark.parametrize("value", ["1", '"x"', "null", "[]"])
def test_a_row_that_is_not_an_object_is_a_bad_row(tmp_path, value):
    (row,) = read(tmp_path, "patients.json", f"[{value}]")
    assert row.problems and row.problems[0].field == ""


def test_a_huge_csv_cell_is_one_error_with_its_line(tmp_path):
    error = refused(tmp_path, "patients.csv", "external_id,name\nP-1,Maria\nP-2," + "x" * 200_000 + "\n")
    assert error.line == 3 and "malformed CSV" in str(error)


def test_a_csv_cell_marked_as_text_by_the_export_is_read_back_without_the_mark(tmp_path):
    rows = read(tmp_path, "patients.csv", "external_id,name\nP-1,'=1+1\nP-2,'''-2\nP-3,O'Brien\n")
    assert [r.fields["name"] for r in rows] == ["=1+1", "''-2", "O'Brien"]
    assert all(r.kind is Kind.PATIENTS for r in rows)
