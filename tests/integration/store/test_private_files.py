"""The data directory is the service's alone (docs/operations.md#file-permissions): a fresh ``migrate`` under a
permissive umask and a served write leave no file wider than 0600 and no directory wider than 0700 — the SQLite
database, its WAL and SHM files, the secrets key — and a start warns about files others can read."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx

from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.store import private_files


def modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root.parent)): stat.S_IMODE(p.lstat().st_mode) for p in [root, *root.rglob("*")]}


def migrate(data: Path) -> None:
    env = {**os.environ, "DOCTORDESK_DATA_DIR": str(data)}
    env.pop("DOCTORDESK_DATABASE_URL", None)
    command = Path(sys.executable).with_name("doctordesk")
    done = subprocess.run(
        [str(command), "migrate"], env=env, capture_output=True, text=True, timeout=180, check=False,
        preexec_fn=lambda: os.umask(0o022),  # what a shell usually has
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


async def test_a_fresh_migrate_and_a_served_write_leave_only_private_files(tmp_path, caplog):
    data = tmp_path / "var" / "data"
    migrate(data)
    settings = Settings(
        data_dir=data,
        database_url=f"sqlite+aiosqlite:///{data / 'doctordesk.db'}",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            answer = await client.post("/auth/login", data={"username": "nobody", "password": "x"})
            assert answer.status_code == 401  # counted and audited: a write
        found = modes(data)
        assert {"data/doctordesk.db", "data/doctordesk.db-wal", "data/secrets.key"} <= set(found)
        wide = {name: oct(mode) for name, mode in found.items() if mode & 0o077}
        assert wide == {}
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert not [r for r in caplog.records if "can be read by other users" in r.getMessage()]


def test_files_others_can_read_are_warned_about(tmp_path, caplog):
    data = tmp_path / "data"
    private_files.private_file(data / "doctordesk.db")
    (data / "doctordesk.db-wal").touch(mode=0o644)
    os.chmod(data / "doctordesk.db-wal", 0o644)
    caplog.set_level(logging.WARNING)
    wide = private_files.warn_wide(data, str(data / "doctordesk.db"))
    assert wide == [data / "doctordesk.db-wal"]
    assert "doctordesk.db-wal can be read by other users" in caplog.text
