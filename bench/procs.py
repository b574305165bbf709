"""A served process tree as Linux shows it in /proc: its processes, their CPU time (user + system) and where they
may run (``taskset``'s CPU affinity, set on every thread). For benchmarks that measure CPU per request and pin the
server and the load generator to cores of their own."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (field 3, the state, first)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (all its threads); 0 when it is gone."""
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime: fields 14 and 15 of stat(5)


def postgres_cpu_seconds() -> float:
    """CPU seconds so far of this machine's PostgreSQL: its live processes' own, and the postmaster's waited-for
    children's (backends that ended: a connection a pool closed after a burst took its CPU with it)."""
    total = 0.0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/comm") as f:
                if f.read().strip() != "postgres":
                    continue
            fields = _stat(int(name))
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        total += int(fields[13]) + int(fields[14])  # cutime, cstime: ended children (the postmaster's backends)
    return total / TICKS


def family(root: int) -> list[int]:
    """``root`` and every process descended from it."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parents[int(name)] = int(_stat(int(name))[1])
            except (OSError, IndexError, ValueError):
                continue
    found = [root]
    for pid in found:  # grows as children are found
        found += [child for child, parent in parents.items() if parent == pid]
    return found


def command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pin(pids: Iterable[int], cpus: set[int]) -> None:
    """Let every thread of ``pids`` run only on ``cpus`` (threads started later inherit it)."""
    for pid in pids:
        try:
            threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in threads:
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:  # the thread ended meanwhile
                continue


def switches(pids: Iterable[int]) -> int:
    """Context switches so far (voluntary and not) of every thread of ``pids``: each wait of an event loop for its
    sockets is one, so their count per request is how often a request's work stopped and resumed."""
    total = 0
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as status:
                    total += sum(int(line.split()[1]) for line in status if "ctxt_switches:" in line)
            except OSError:  # the thread ended meanwhile
                continue
    return total


def client_cpu_seconds() -> float:
    """CPU seconds of this process and of its waited-for children (wrk runs): the load generator's."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Tree:
    """A server started as ``root``: its workers (uvicorn's spawned children, or ``root`` itself when it serves
    alone) and the rest of its processes (the supervisor, which runs the Unix-socket bus's broker)."""

    root: int
    workers: tuple[int, ...]

    @classmethod
    def of(cls, root: int) -> Tree:
        spawned = [p for p in family(root)[1:] if "spawn_main" in command(p)]
        return cls(root, tuple(spawned) or (root,))

    def snapshot(self) -> dict[int, float]:
        """CPU seconds so far of each process of the tree."""
        return {pid: cpu_seconds(pid) for pid in family(self.root)}


def _established(port: int) -> set[str]:
    """Socket inodes of the established TCP connections whose local port is ``port`` (the server's side)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[1].rsplit(":", 1)[1] == f"{port:04X}" and fields[3] == "01":
                found.add(fields[9])
    return found


def connections(pids: Iterable[int], port: int) -> list[int]:
    """How many established connections to ``port`` each of ``pids`` holds."""
    open_now = _established(port)
    counts: list[int] = []
    for pid in pids:
        inodes: set[str] = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            pass
        counts.append(len(inodes & open_now))
    return counts


def named(fragment: str) -> dict[int, float]:
    """CPU seconds so far of every process whose command line contains ``fragment`` (PostgreSQL names a
    connection's backend process after its database: ``postgres: … user database host(port) state``)."""
    found: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and fragment in command(int(name)):
            found[int(name)] = cpu_seconds(int(name))
    return found
