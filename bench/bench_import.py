"""Bulk import of 10,000 appointments through the real command (``doctordesk import FILE --progress``, a process
with its start-up included, the progress bar drawn to a pipe): the first import (every row created), the same file
again (every row unchanged), a file that changes every row's status (updated, with history), and the CSV form
into a fresh database.

The clinic the appointments name (3 locations, 20 doctors, 500 patients with policies) is imported first and not
timed. SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server database to connect
through (the benchmark creates databases of its own there and drops them afterwards).

    python -m bench import            (or: make bench BENCH=import)
Target: the first import of 10,000 appointments ≤ 10 s on SQLite.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import FAST_HASHING, ROOT, machine, own_postgres_databases, table

APPOINTMENTS = int(os.environ.get("DOCTORDESK_BENCH_IMPORT_ROWS", "10000"))
TARGET_SECONDS = 10.0
STATUSES = ("requested", "approved", "completed", "canceled", "declined", "pending-response")


def clinic() -> dict[str, list[dict[str, Any]]]:
    locations = [
        {"external_id": f"L-{i}", "name": f"Clinic {i}", "timezone": tz}
        for i, tz in enumerate(("Europe/Berlin", "Europe/London", "Europe/Vienna"))
    ]
    doctors = [
        {"external_id": f"D-{i}", "username": f"dr{i}", "name": f"Dr. {i}", "specialty": "General practice"}
        for i in range(20)
    ]
    patients = [{"external_id": f"P-{i}", "name": f"Patient {i}", "birth_date": "1980-01-01"} for i in range(500)]
    policies = [
        {
            "external_id": f"PO-{i}",
            "patient": f"P-{i}",
            "insurer": "Hansa Health",
            "policy_number": f"HH-{i:05d}",
            "valid_from": "2026-01-01",
            "valid_to": "2027-12-31",
        }
        for i in range(500)
    ]
    return {"locations": locations, "doctors": doctors, "patients": patients, "policies": policies}


def appointments(shift: int = 0) -> list[dict[str, Any]]:
    start = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    rows = []
    for i in range(APPOINTMENTS):
        status = STATUSES[(i + shift) % len(STATUSES)]
        rows.append(
            {
                "external_id": f"A-{i}",
                "patient": f"P-{i % 500}",
                "doctor": f"D-{i % 20}",
                "location": f"L-{i % 3}",
                "start": (start + timedelta(minutes=30 * i)).isoformat(),
                "duration_minutes": 30,
                "status": status,
                "decline_reason": "Outside my specialty." if status == "declined" else None,
            }
        )
    return rows


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([{k: "" if v is None else v for k, v in row.items()} for row in rows])


def doctordesk(env: dict[str, str], *args: str) -> tuple[float, str]:
    """Run the command; (seconds, stdout)."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "doctordesk.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"doctordesk {' '.join(args)} failed:\n{result.stdout}\n{result.stderr[-3000:]}")
    return elapsed, result.stdout


def summary(stdout: str) -> str:
    line = [ln for ln in stdout.splitlines() if ln.startswith("appointments")][0].split()
    return f"{line[1]} created, {line[2]} updated, {line[3]} unchanged"


def run_case(label: str, database_url: str | None, work: Path) -> list[list[Any]]:
    env = {**os.environ, **FAST_HASHING, "DOCTORDESK_DATA_DIR": str(work / label)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("DOCTORDESK_DATABASE_URL", None)
    if database_url:
        env["DOCTORDESK_DATABASE_URL"] = database_url
    doctordesk(env, "migrate")
    doctordesk(env, "import", str(work / "clinic.json"))
    rows = []
    for case, name in (
        ("first import (created)", "appointments.json"),
        ("same file again (unchanged)", "appointments.json"),
        ("every status changed (updated)", "appointments-changed.json"),
    ):
        seconds, out = doctordesk(env, "import", str(work / name), "--progress")
        rows.append([label, case, APPOINTMENTS, round(seconds, 2), round(APPOINTMENTS / seconds), summary(out)])
    return rows


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="doctordesk-bench-import-") as tmp:
        work = Path(tmp)
        (work / "clinic.json").write_text(json.dumps(clinic()))
        (work / "appointments.json").write_text(json.dumps({"appointments": appointments()}, indent=0))
        (work / "appointments-changed.json").write_text(json.dumps({"appointments": appointments(1)}, indent=0))
        write_csv(work / "appointments.csv", appointments())
        results = run_case("SQLite", None, work)
        env_csv = work / "csv"
        env = {**os.environ, **FAST_HASHING, "DOCTORDESK_DATA_DIR": str(env_csv)}
        env.pop("DOCTORDESK_DATABASE_URL", None)
        doctordesk(env, "migrate")
        doctordesk(env, "import", str(work / "clinic.json"))
        seconds, out = doctordesk(env, "import", str(work / "appointments.csv"), "--progress")
        results.append(
            [
                "SQLite",
                "first import, CSV",
                APPOINTMENTS,
                round(seconds, 2),
                round(APPOINTMENTS / seconds),
                summary(out),
            ]
        )
        server = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL")
        if server:
            with own_postgres_databases(server, ["doctordesk_bench_import"]) as (url,):
                results += run_case("PostgreSQL", url, work)
    print(f"machine: {machine()}; one process per run, start-up included; progress bar drawn")
    print(table(["database", "case", "rows", "seconds", "rows/s", "result"], results))
    first = results[0][3]
    ok = first <= TARGET_SECONDS
    print(
        f"target: first import of {APPOINTMENTS} appointments on SQLite ≤ {TARGET_SECONDS:.0f} s: "
        f"{first:.2f} s — {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
