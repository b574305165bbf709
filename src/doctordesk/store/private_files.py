"""Files of the data directory are the service's alone: created 0600 (directories 0700), and a warning at start for
those that other users of the host can read (docs/operations.md#file-permissions).

The database holds usernames, password hashes and patients: SQLite's file, and its WAL and SHM files (which SQLite
creates with the database file's own mode), must not be world-readable as a default umask (022) would leave them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

FILE_MODE = 0o600
DIR_MODE = 0o700
# Bits that let others than the owner in.
OTHERS = 0o077
# The SQLite files beside a database file.
SQLITE_SIDES = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) as 0700; an existing directory is left as it is (warned about)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(directory, DIR_MODE)  # mkdir's mode passes through the umask


def private_file(path: Path) -> None:
    """Create an empty ``path`` as 0600 when it does not exist (SQLite then opens it, and gives its WAL and SHM
    files the same mode); an existing file is left as it is."""
    private_dir(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(descriptor)


def private_umask() -> None:
    """For a command's whole process (serve, migrate, worker...): whatever else it creates is 0600/0700 too."""
    os.umask(OTHERS)


def wide_paths(data_dir: Path, *extra: Path) -> list[Path]:
    """The data directory, every file and directory under it, and ``extra`` files (a database elsewhere, with its
    SQLite sides) that others than the owner may read or enter."""
    found: list[Path] = []
    candidates: Iterable[Path] = [data_dir, *data_dir.rglob("*")] if data_dir.is_dir() else []
    for path in [*candidates, *extra]:
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if mode & OTHERS and not path.is_symlink():
            found.append(path)
    return sorted(set(found))


def sqlite_paths(database: str | None) -> list[Path]:
    """An SQLite database file and its sides (none for an in-memory database or another backend)."""
    if not database or database == ":memory:":
        return []
    base = Path(database)
    return [base, *(base.with_name(base.name + side) for side in SQLITE_SIDES)]


def warn_wide(data_dir: Path, database: str | None) -> list[Path]:
    """Log a warning naming each file or directory that others can read (the service's start); returns them."""
    wide = wide_paths(data_dir, *sqlite_paths(database))
    for path in wide:
        log.warning("%s can be read by other users of this host: chmod %s it", path,
                    "700" if path.is_dir() else "600")  # fmt: skip
    return wide
