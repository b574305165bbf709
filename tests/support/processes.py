"""doctordesk's own processes for the tests (a server, ``doctordesk worker``, ``doctordesk import`` …), forked from
a launcher that imported the app once per test process.

A new interpreter spends about 2.5 s of CPU importing the app before it does anything, and the suite starts a few
hundred such processes. The launcher is ``multiprocessing``'s fork server with the app preloaded: each process is
forked from it (not from the test process, so nothing of a test's state is inherited), takes the environment it is
given, sends its output to files and runs the same entry point the command line does (``doctordesk …`` or
``uvicorn …``), exits with its exit status and can be killed like any process.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path

# What the launcher imports once, before it forks.
PRELOAD = ["doctordesk.app", "doctordesk.cli", "doctordesk.cli_transfer", "uvicorn.main", "tests.support.processes"]
_launcher: list[ForkServerContext] = []


def _context() -> ForkServerContext:
    if not _launcher:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _launcher.append(context)
    return _launcher[0]


def _main(argv: list[str], env: dict[str, str], stdout: str, stderr: str) -> None:
    """The launched process: this environment, output to the files, then the command's own main."""
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, stdout), (2, stderr)):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, fd)
        os.close(out)
    sys.argv = argv
    if argv[0] == "doctordesk":
        from doctordesk.cli import app

        app(args=argv[1:], prog_name="doctordesk")
    elif argv[0] == "uvicorn":
        from uvicorn.main import main

        main(args=argv[1:], prog_name="uvicorn")
    else:
        raise ValueError(f"not a command the launcher runs: {argv[0]}")


class Launched:
    """A launched process, with the calls of ``subprocess.Popen`` the tests use."""

    def __init__(self, process: BaseProcess) -> None:
        self._process = process

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(str(self._process.name), timeout or 0)
        return self._process.exitcode

    async def finished(self, timeout: float) -> int:
        """``wait`` for asyncio tests (the event loop keeps running meanwhile)."""
        return await asyncio.to_thread(self.wait, timeout)


def launch(argv: list[str], env: dict[str, str], output: Path, errors: Path | None = None) -> Launched:
    """Start ``argv`` (``["doctordesk", "worker"]``, ``["uvicorn", …]``) with exactly ``env``; its output is
    appended to ``output`` (its errors too, unless ``errors`` names another file)."""
    target_args = (argv, dict(env), str(output), str(errors or output))
    process = _context().Process(target=_main, args=target_args, daemon=True)
    process.start()
    return Launched(process)


def run(argv: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end, as ``subprocess.run(…, capture_output=True, text=True)`` does."""
    with tempfile.TemporaryDirectory(prefix="doctordesk-run-") as work:
        out, err = Path(work, "stdout"), Path(work, "stderr")
        process = launch(argv, env, out, err)
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
            raise
        return subprocess.CompletedProcess(argv, code, _text(out), _text(err))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
