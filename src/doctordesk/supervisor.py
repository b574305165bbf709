"""``serve --workers N``: N uvicorn servers, each in a process of its own and, on Linux, each accepting on a
listening socket of its own (``SO_REUSEPORT``), so the kernel spreads new connections across the workers.

uvicorn's own supervisor gives every worker one shared listening socket; the worker the kernel wakes first accepts
every connection waiting, so connections opened together (a proxy's pool, a load generator, one client's) all land
on one worker (measured: docs/benchmarks.md, Workers). With one socket per worker in a ``SO_REUSEPORT`` group,
Linux picks the socket for each new connection by a hash of its addresses and ports: connections opened together
split between the workers. Where balancing by ``SO_REUSEPORT`` is not available (not Linux), the workers share one
socket as before.

The sockets are bound here, in the supervising process, and stay open here while their workers live. A worker
that exits is replaced on a new socket (the other workers take every new connection until the replacement
listens); SIGHUP's replacements take over the old worker's socket while it still serves.
What uvicorn's supervisor does is kept: SIGINT/SIGTERM stop every worker gracefully (each finishes what it serves
within ``timeout_graceful_shutdown``), a worker that exits is started again unless it failed before it started
serving (then the app cannot start: everything stops with uvicorn's startup-failure status), SIGHUP replaces the
workers one by one, each after its replacement has started. Not kept: adding and removing workers by
SIGTTIN/SIGTTOU (logged and ignored) and the health check of a worker that hangs while alive.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from types import FrameType

import uvicorn
from uvicorn.config import STARTUP_FAILURE

logger = logging.getLogger("uvicorn.error")
spawn = multiprocessing.get_context("spawn")
multiprocessing.allow_connection_pickling()

# How long SIGHUP waits for a replacement to start serving before it keeps the old worker.
START_SECONDS = 60.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
IGNORED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTTIN", "SIGTTOU") if hasattr(signal, name))


def balances_by_reuse_port() -> bool:
    """Whether listening sockets of a ``SO_REUSEPORT`` group share new connections out here (Linux 3.9+; other
    systems either lack the option or give every connection to one of the sockets)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def listening_socket(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (IPv6 when the host has a colon), not yet listening (the worker's
    server listens on it), inheritable by the workers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def bind_sockets(host: str, port: int, *, workers: int, reuse_port: bool) -> list[socket.socket]:
    """One socket per worker in a ``SO_REUSEPORT`` group, or one shared by all; port 0 picks one free port for
    the whole group."""
    first = listening_socket(host, port, reuse_port=reuse_port)
    if not reuse_port:
        return [first] * workers
    sockets = [first]
    try:
        for _ in range(workers - 1):
            sockets.append(listening_socket(host, first.getsockname()[1], reuse_port=True))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _work(config: uvicorn.Config, sock: socket.socket, started: Connection) -> None:
    """A worker process: one uvicorn server on ``sock``; tells the supervisor once it serves."""
    config.configure_logging()
    server = uvicorn.Server(config)

    def report() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        started.send(server.started)

    threading.Thread(target=report, daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl+C reaches the whole process group; the supervisor stops the workers
        pass


@dataclass
class Worker:
    """A worker process, the socket it accepts on and the pipe on which it says it started."""

    process: SpawnProcess
    sock: socket.socket
    started: Connection

    @classmethod
    def start(cls, config: uvicorn.Config, sock: socket.socket) -> Worker:
        ours, theirs = spawn.Pipe(duplex=False)
        process = spawn.Process(target=_work, args=(config, sock, theirs), daemon=False)
        process.start()
        theirs.close()
        return cls(process, sock, ours)

    def wait_started(self, seconds: float, *, unless: threading.Event) -> bool:
        """Whether the worker started serving within ``seconds`` (False when it exited first or ``unless`` was
        set meanwhile)."""
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline and not unless.is_set():
                if self.started.poll(0.5):
                    return bool(self.started.recv())
        except (EOFError, OSError):
            pass
        return False

    def stop(self) -> None:
        if self.process.exitcode is None and self.process.pid is not None:
            os.kill(self.process.pid, signal.SIGTERM)

    def join(self) -> None:
        self.process.join()
        self.started.close()


class Supervisor:
    """Starts the workers, keeps them running and stops them (``run``)."""

    def __init__(self, config: uvicorn.Config, *, workers: int, reuse_port: bool | None = None) -> None:
        self.config = config
        self.count = workers
        self.reuse_port = balances_by_reuse_port() if reuse_port is None else reuse_port
        self.workers: list[Worker] = []
        self.signals: list[int] = []
        self.should_exit = threading.Event()
        self.status = 0

    def _on_signal(self, number: int, _frame: FrameType | None) -> None:
        self.signals.append(number)
        if number in STOP_SIGNALS:
            self.should_exit.set()

    def run(self) -> int:
        """Serve until SIGINT or SIGTERM (or a worker that cannot start); the exit status."""
        try:
            sockets = bind_sockets(self.config.host, self.config.port, workers=self.count, reuse_port=self.reuse_port)
        except OSError as exc:
            logger.error("cannot listen on %s:%s: %s", self.config.host, self.config.port, exc)
            return STARTUP_FAILURE
        for number in (*STOP_SIGNALS, signal.SIGHUP, *IGNORED_SIGNALS):
            signal.signal(number, self._on_signal)
        how = "a socket each (SO_REUSEPORT)" if self.reuse_port else "one shared socket"
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        logger.info(
            "Uvicorn running on http://%s:%d with %d workers on %s, supervised by process [%d]",
            host, sockets[0].getsockname()[1], self.count, how, os.getpid(),
        )  # fmt: skip
        self.workers = [Worker.start(self.config, sock) for sock in sockets]
        while not self.should_exit.is_set():
            self._pause(0.5)
            self._handle_signals()
            self._replace_exited()
        for worker in self.workers:
            worker.stop()
        for sock in {id(w.sock): w.sock for w in self.workers}.values():
            sock.close()  # once the workers closed theirs too, new connections are refused, not left queued
        for worker in self.workers:
            worker.join()
        logger.info("Stopping supervisor process [%d]", os.getpid())
        return self.status

    def _pause(self, seconds: float) -> None:
        """Up to ``seconds``, less once a signal came. Short sleeps rather than ``Event.wait(seconds)``: a lock's
        timed wait goes by an absolute deadline on the monotonic clock, which the kernel never reaches in a process
        whose clock is moved (the suite's runs under libfaketime, docs/development.md), and the supervisor hung."""
        deadline = time.monotonic() + seconds
        while not self.signals and not self.should_exit.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _handle_signals(self) -> None:
        while self.signals:
            number = self.signals.pop(0)
            if number == signal.SIGHUP:
                logger.info("Received SIGHUP, replacing the workers one by one.")
                self._replace_all()
            elif number in IGNORED_SIGNALS:
                logger.info(
                    "Received %s: changing the number of workers is not supported.", signal.Signals(number).name
                )

    def _replace_exited(self) -> None:
        for n, worker in enumerate(self.workers):
            if worker.process.is_alive() or self.should_exit.is_set():
                continue
            worker.join()
            if worker.process.exitcode == STARTUP_FAILURE:
                logger.error("Worker [%s] failed to start; stopping.", worker.process.pid)
                self.status = STARTUP_FAILURE
                self.should_exit.set()
                return
            logger.warning("Worker [%s] exited (%s); starting another.", worker.process.pid, worker.process.exitcode)
            self.workers[n] = Worker.start(self.config, self._socket_after(worker.sock))

    def _socket_after(self, dead: socket.socket) -> socket.socket:
        """The socket for the replacement of a worker that exited. The old one would stay in the group while
        open here, and the kernel would go on queueing new connections on it until the replacement has started
        (seconds). A new socket joins the group only when the replacement listens on it; meanwhile the other
        workers take every new connection. The few connections already queued on the old socket are reset
        (with one shared socket, another worker would have accepted them)."""
        if not self.reuse_port:
            return dead
        try:
            fresh = listening_socket(self.config.host, dead.getsockname()[1], reuse_port=True)
        except OSError as exc:
            logger.error("cannot bind a new socket for the replacement (%s); it takes the old one", exc)
            return dead
        dead.close()
        return fresh

    def _replace_all(self) -> None:
        for n, old in enumerate(self.workers):
            if self.should_exit.is_set():
                return
            new = Worker.start(self.config, old.sock)
            if not new.wait_started(START_SECONDS, unless=self.should_exit):
                new.stop()
                new.join()
                logger.error("Worker [%s] did not start; keeping [%s].", new.process.pid, old.process.pid)
                return
            old.stop()
            old.join()
            self.workers[n] = new
