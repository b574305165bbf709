"""Debian's chromium driven by Playwright (Playwright's own browser downloads are not used).

``chromium_executable()`` finds the browser, installing the Debian package when it is missing and the machine
allows it (root with apt-get); otherwise the browser tests skip with the reason, or fail when
``DOCTORDESK_REQUIRE_SERVICES=1`` (CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.support.databases import unavailable

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

_state: dict[str, str | None] = {}


def _find() -> str | None:
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def _install() -> str | None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "chromium is not installed and this user cannot install it (run `make browser` as root)"
    for command in (["apt-get", "install", "-y", "-q", "chromium"], ["apt-get", "update", "-q"]):
        subprocess.run(command, capture_output=True, timeout=900, check=False)
        if command[1] == "update":
            subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, timeout=900)
        if _find():
            return None
    return "apt-get could not install chromium"


def chromium_executable() -> str:
    """The path of Debian's chromium (skip or fail the test when there is none)."""
    if "path" not in _state:
        path = _find()
        reason = None
        if path is None:
            reason = _install()
            path = _find()
        _state["path"] = path
        _state["reason"] = reason
    if _state["path"] is None:
        unavailable("Debian's chromium", _state["reason"] or "not found")
    path = _state["path"]
    assert path is not None
    return path
