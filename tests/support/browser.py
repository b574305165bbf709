"""Debian's chromium driven by Playwright (Playwright's own browser downloads are not used).

``chromium_executable()`` finds the browser the tests drive: Debian's ``chromium-headless-shell`` (the same
Blink and V8 as ``chromium``, without the browser's own interface: the browser process, the interface's WebUI
renderer and the GPU process cost about half the CPU of a test, docs/development.md "Browsers and servers"); it
is what Playwright itself runs for headless tests. It installs the package when it is missing and the machine
allows it (root with apt-get), and otherwise falls back to ``chromium`` (slower, same behaviour). When there is
no browser at all the browser tests skip with the reason, or fail when ``DOCTORDESK_REQUIRE_SERVICES=1`` (CI).
``chromium_executable(headless_shell=False)`` is the full browser (the README's screenshots).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.support.databases import unavailable

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# The binary itself, not /usr/bin's shell script that only runs it.
HEADLESS_SHELL = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell")
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


def _find(candidates: tuple[str, ...], name: str) -> str | None:
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def _install(package: str, candidates: tuple[str, ...]) -> str | None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{package} is not installed and this user cannot install it (run `make browser` as root)"
    for command in (["apt-get", "install", "-y", "-q", package], ["apt-get", "update", "-q"]):
        subprocess.run(command, capture_output=True, timeout=900, check=False)
        if command[1] == "update":
            subprocess.run(["apt-get", "install", "-y", "-q", package], capture_output=True, timeout=900)
        if _find(candidates, package):
            return None
    return f"apt-get could not install {package}"


def _locate(headless_shell: bool) -> tuple[str | None, str | None]:
    """(path, why there is none)."""
    if headless_shell:
        path = _find(HEADLESS_SHELL, "chromium-headless-shell")
        if path is None and _install("chromium-headless-shell", HEADLESS_SHELL) is None:
            path = _find(HEADLESS_SHELL, "chromium-headless-shell")
        if path is not None:
            return path, None
    path = _find(CANDIDATES, "chromium")
    if path is not None:
        return path, None
    reason = _install("chromium", CANDIDATES)
    return _find(CANDIDATES, "chromium"), reason


def chromium_executable(*, headless_shell: bool = True) -> str:
    """The path of Debian's chromium: its headless shell unless ``headless_shell=False`` (skip or fail the test
    when there is none)."""
    key = "shell" if headless_shell else "full"
    if key not in _state:
        _state[key], _state[f"{key} reason"] = _locate(headless_shell)
    path = _state[key]
    if path is None:
        unavailable("Debian's chromium", _state[f"{key} reason"] or "not found")
    assert path is not None
    return path
