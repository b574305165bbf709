"""``doctordesk import`` and ``doctordesk export`` as processes: bad rows on stderr with file and line, a non-zero exit
status, nothing written; --skip-invalid, --dry-run, the progress bar on request; export → import round trip."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_cli import run, sqlite_count

LOCATIONS = """external_id,name,address,timezone
L-1,Berlin Mitte,Friedrichstrasse 100,Europe/Berlin
L-2,Munich,,Mars/Olympus
L-3,London Bridge,1 Tooley Street,Europe/London
L-4,,,UTC
"""


@pytest.mark.slow
def test_import_reports_bad_rows_by_line_writes_nothing_and_a_rerun_changes_nothing(tmp_path):
    data = tmp_path / "data"
    run(data, "migrate")
    path = tmp_path / "locations.csv"
    path.write_text(LOCATIONS)

    refused = run(data, "import", str(path), check=False)
    assert refused.returncode == 1
    assert f"{path}:3: locations: timezone: not an IANA time zone name" in refused.stderr
    assert f"{path}:5: locations: name: required" in refused.stderr
    assert "nothing written: 2 bad row(s)" in refused.stdout
    assert sqlite_count(data, "select count(*) from locations") == 0

    dry = run(data, "import", str(path), "--skip-invalid", "--dry-run", check=False)
    assert dry.returncode == 1 and "dry run: 2 change(s)" in dry.stdout
    assert sqlite_count(data, "select count(*) from locations") == 0

    skipped = run(data, "import", str(path), "--skip-invalid", "--progress", check=False)
    assert skipped.returncode == 1  # a bad row always makes the exit status non-zero
    assert "2 change(s) written, 2 bad row(s) skipped" in skipped.stdout
    assert "checking" in skipped.stderr and "writing" in skipped.stderr  # the progress bar, asked for
    assert sqlite_count(data, "select count(*) from locations where external_id in ('L-1', 'L-3')") == 2

    path.write_text(LOCATIONS.replace("Mars/Olympus", "Europe/Berlin").replace("L-4,,", "L-4,Online,"))
    fixed = run(data, "import", str(path))
    assert "2 change(s) written" in fixed.stdout and "checking" not in fixed.stderr  # no bar off a terminal
    again = run(data, "import", str(path))
    assert "0 change(s) written" in again.stdout
    assert sqlite_count(data, "select count(*) from locations") == 4


@pytest.mark.slow
def test_export_then_import_into_an_empty_database_round_trips(tmp_path):
    source, target = tmp_path / "source", tmp_path / "target"
    run(source, "migrate")
    run(source, "seed-demo")
    exported = tmp_path / "clinic.json"
    run(source, "export", "--output", str(exported))
    document = json.loads(exported.read_text())
    assert list(document) == ["locations", "doctors", "hours", "patients", "policies", "appointments"]
    csv_text = run(source, "export", "--kind", "appointments", "--format", "csv").stdout
    assert csv_text.count("\n") == len(document["appointments"]) + 1

    run(target, "migrate")
    imported = run(target, "import", str(exported))
    assert f"{sum(len(rows) for rows in document.values())} change(s) written" in imported.stdout
    assert "0 change(s) written" in run(source, "import", str(exported)).stdout
    assert run(target, "export").stdout == exported.read_text()
    assert sqlite_count(target, "select count(*) from users where password_hash like '$argon2%'") == 0

    refused = run(target, "export", "--format", "csv", check=False)
    assert refused.returncode == 2 and "--kind" in refused.stderr


@pytest.mark.slow
def test_import_reports_in_the_terminals_language(tmp_path):
    data = tmp_path / "data"
    run(data, "migrate")
    path = tmp_path / "locations.csv"
    path.write_text(LOCATIONS)
    german = {"LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "de_DE.UTF-8"}

    refused = run(data, "import", str(path), check=False, env=german)
    assert refused.returncode == 1
    assert f"{path}:3: locations: timezone: kein IANA-Zeitzonenname (zum Beispiel Europe/Berlin)" in refused.stderr
    assert f"{path}:5: locations: name: erforderlich" in refused.stderr
    assert "nichts geschrieben: 2 fehlerhafte Zeile(n)" in refused.stdout
    assert refused.stdout.splitlines()[0].split() == ["Art", "angelegt", "geändert", "unverändert", "ungültig"]
    unreadable = tmp_path / "notes.txt"
    unreadable.write_text("x")
    wrong = run(data, "import", str(unreadable), check=False, env=german)
    assert wrong.stderr.strip() == (
        f"Fehler: {unreadable}:0: unbekanntes Format: Benennen Sie die Datei .csv oder .json oder geben Sie --format an"
    )
    english = run(data, "import", str(path), check=False, env={**german, "LANG": "C.UTF-8"})
    assert f"{path}:5: locations: name: required" in english.stderr
    assert sqlite_count(data, "select count(*) from locations") == 0
