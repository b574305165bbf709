"""The ``doctordesk`` command: every command has --help; migrate, seed-demo and create-user work as processes on a
fresh data directory; seed-demo --if-empty is idempotent; create-user is audited, by the service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from doctordesk.cli import app
from tests.support import processes

COMMANDS = sorted(c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands)  # type: ignore[union-attr]


def test_the_foundation_commands_exist():
    assert {"serve", "migrate", "seed-demo", "create-user"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and len(result.output.splitlines()) > 3


def test_the_installed_command_starts_in_a_new_interpreter():
    # The other process tests fork from a launcher that imported the app (tests/support/processes.py): this one
    # runs the console script pip installed, as `make run` does.
    command = Path(sys.executable).with_name("doctordesk")
    result = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert all(c in result.stdout for c in COMMANDS)


def test_the_command_without_arguments_lists_the_commands():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert all(c in result.output for c in COMMANDS)


def run(
    data_dir: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DOCTORDESK_DATA_DIR": str(data_dir),
        "DOCTORDESK_ARGON2_TIME_COST": "1",
        "DOCTORDESK_ARGON2_MEMORY_KIB": "1024",
        **(env or {}),
    }
    env.pop("DOCTORDESK_DATABASE_URL", None)
    result = processes.run(["doctordesk", *args], env)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result


def sqlite_count(data_dir: Path, sql: str) -> int:
    import sqlite3

    with sqlite3.connect(data_dir / "doctordesk.db") as conn:
        return int(conn.execute(sql).fetchone()[0])


@pytest.mark.slow
def test_migrate_seed_demo_and_create_user_as_processes_on_a_fresh_data_dir(tmp_path):
    data = tmp_path / "data"
    assert "up to date" in run(data, "migrate").stdout
    assert "up to date" in run(data, "migrate").stdout  # again: nothing to do
    assert (data / "doctordesk.db").is_file()
    assert "demo data created" in run(data, "seed-demo", "--if-empty").stdout
    users = sqlite_count(data, "select count(*) from users")
    appointments = sqlite_count(data, "select count(*) from appointments")
    assert users >= 11 and appointments >= 30
    # --if-empty on a seeded database leaves it alone; without it, seeding a non-empty database is refused.
    assert "left alone" in run(data, "seed-demo", "--if-empty").stdout
    refused = run(data, "seed-demo", check=False)
    assert refused.returncode != 0 and "already has users" in refused.stderr + refused.stdout
    assert sqlite_count(data, "select count(*) from users") == users
    assert sqlite_count(data, "select count(*) from appointments") == appointments

    created = run(data, "create-user", "drnew", "--role", "doctor", "--name", "Dr. New", "--password", "s3cret!")
    assert "created user drnew" in created.stdout
    assert sqlite_count(data, "select count(*) from users where username = 'drnew' and role = 'doctor'") == 1
    assert (
        sqlite_count(
            data, "select count(*) from doctor_profiles p join users u on u.id = p.user_id where u.username = 'drnew'"
        )
        == 1
    )
    duplicate = run(data, "create-user", "drnew", "--password", "other1", check=False)
    assert duplicate.returncode != 0 and "Already taken" in duplicate.stdout + duplicate.stderr
    short = run(data, "create-user", "someone", "--password", "x", check=False)
    assert short.returncode != 0 and "password" in (short.stdout + short.stderr).lower()
    bad_role = run(data, "create-user", "someone", "--role", "wizard", "--password", "longer", check=False)
    assert bad_role.returncode != 0
    assert sqlite_count(data, "select count(*) from users") == users + 1
    # Audited as an administrator's creation, by the service (no user): the refused attempts wrote nothing.
    audited = (
        "select count(*) from audit_log a join users u on u.id = a.entity_id where a.action = 'admin.user-created'"
        " and a.entity = 'user' and a.actor_id is null"
    )
    assert sqlite_count(data, audited + " and u.username = 'drnew'") == 1
    assert sqlite_count(data, audited) == 1


def test_a_variable_that_names_no_setting_is_ignored_with_a_warning_naming_it(tmp_path):
    # The retired secret key and a typo: the command runs, and says each one has no effect.
    retired = {
        "DOCTORDESK_SECRET_KEY": "change-me-in-production",
        "DOCTORDESK_DATABSE_URL": "postgresql+asyncpg://db/prod",
    }
    result = run(tmp_path / "data", "migrate", env=retired)
    assert "up to date" in result.stdout
    reported = {line.split()[0] for line in result.stderr.splitlines() if "is not a setting of doctordesk" in line}
    assert set(retired) <= reported
    assert not reported & {"DOCTORDESK_DATA_DIR", "DOCTORDESK_ARGON2_TIME_COST", "DOCTORDESK_ARGON2_MEMORY_KIB"}


async def test_a_created_user_can_log_in(client, runtime):
    from doctordesk.domain.roles import Role
    from doctordesk.services.admin.command_line import create_user

    await create_user(runtime, username="Nurse1", role=Role.SUPPORT, display_name="Nurse", password="pw1234")
    response = await client.post("/auth/login", data={"username": "nurse1", "password": "pw1234"})
    assert response.status_code == 200
    assert response.json()["user"]["role"] == "support"


async def test_a_user_created_from_the_command_line_is_in_the_audit_trail_by_the_service(runtime):
    from sqlalchemy import select

    from doctordesk.domain.roles import Role
    from doctordesk.services.admin.command_line import create_user
    from doctordesk.store.tables import AuditLog

    user_id = await create_user(runtime, username="DrCli", role=Role.DOCTOR, display_name="Dr. Cli", password="pw1234")
    async with runtime.db.read() as session:
        entries = (await session.scalars(select(AuditLog).where(AuditLog.action == "admin.user-created"))).all()
    assert [(e.entity, e.entity_id, e.actor_id) for e in entries] == [("user", user_id, None)]
    after = entries[0].details["after"]
    assert after["username"] == "drcli" and after["role"] == "doctor" and after["display_name"] == "Dr. Cli"
    assert after["doctor"]["specialty"] == "General practice" and after["doctor"]["can_prescribe"] is True
    assert entries[0].details["before"] is None and "password" not in str(entries[0].details)


@pytest.mark.parametrize("command", ["migrate", "serve", "worker"])
def test_an_out_of_range_setting_stops_a_command_with_a_message_naming_the_variable(tmp_path, command):
    result = run(tmp_path / "data", command, check=False, env={"DOCTORDESK_CHAT_PAGE_SIZE": "0"})
    assert result.returncode == 2
    assert "DOCTORDESK_CHAT_PAGE_SIZE='0'" in result.stderr and "greater than or equal to 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "data" / "doctordesk.db").exists()  # nothing was done
