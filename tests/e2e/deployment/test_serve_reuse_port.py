"""``doctordesk serve --workers 2``'s supervisor (supervisor.py): each worker accepts on a listening socket of its
own (``SO_REUSEPORT``), so connections opened together reach both workers (with one shared socket, the worker woken
first took them all); a worker that dies is replaced; SIGTERM stops every worker within the graceful-shutdown time,
open streams included."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest
from uvicorn.config import STARTUP_FAILURE

from doctordesk.cli import SHUTDOWN_GRACE_SECONDS
from doctordesk.supervisor import balances_by_reuse_port, bind_sockets
from tests.e2e.deployment.processes import (
    Served,
    alive,
    clients_per_process,
    instances_at_once,
    listening,
    worker_pids,
)
from tests.e2e.realtime.test_routing_live import login
from tests.support.sse import open_stream

pytestmark = pytest.mark.skipif(not balances_by_reuse_port(), reason="SO_REUSEPORT balances connections on Linux")

LIST = "/profile/appointments"
TOGETHER = 16  # all on one of two workers by chance: 2 in 2**16


def _serve(data_dir: Path) -> Served:
    server = Served(data_dir)
    server.extra_env.pop("DOCTORDESK_DATABASE_URL", None)
    server.prepare()
    server.start()  # once one worker answers
    _wait_for(lambda: listening(server.port) == 2, 120, "the second worker did not start")
    return server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = _serve(tmp_path_factory.mktemp("reuse-port"))
    try:
        yield server
    finally:
        server.stop()


def _root(server: Served) -> int:
    assert server.process is not None
    return server.process.pid


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_connections_opened_together_reach_both_workers(served: Served) -> None:
    workers = worker_pids(_root(served))
    assert len(workers) == 2
    instances = instances_at_once(served.url, TOGETHER, workers=workers)
    assert len(set(instances)) == 2, instances


def test_a_killed_worker_is_replaced_and_takes_its_share_of_new_connections(served: Served) -> None:
    before = worker_pids(_root(served))
    killed = min(before)
    os.kill(killed, signal.SIGKILL)
    _wait_for(lambda: len(worker_pids(_root(served)) - before) == 1, 120, "no worker replaced the killed one")
    now = worker_pids(_root(served))
    assert killed not in now and len(now) == 2
    # While the replacement starts, no new connection waits for it: the survivor answers every one at once.
    assert len(instances_at_once(served.url, TOGETHER, seconds=5)) == TOGETHER
    _wait_for(lambda: listening(served.port) == 2, 120, "the replacement did not start")
    assert len(set(instances_at_once(served.url, TOGETHER, workers=now))) == 2


def test_sighup_replaces_every_worker_while_requests_are_answered_throughout(served: Served) -> None:
    before = worker_pids(_root(served))
    answers: list[int] = []
    stop = threading.Event()

    def ask() -> None:  # a new connection each time, so each may reach any worker, old or new
        while not stop.is_set():
            try:
                answers.append(httpx.get(f"{served.url}/readyz", timeout=30).status_code)
            except httpx.HTTPError:
                answers.append(0)  # refused or reset
            time.sleep(0.05)

    asking = threading.Thread(target=ask)
    asking.start()
    try:
        os.kill(_root(served), signal.SIGHUP)
        _wait_for(lambda: not worker_pids(_root(served)) & before, 240, "the workers were not all replaced")
    finally:
        stop.set()
        asking.join()
    now = worker_pids(_root(served))
    assert len(now) == 2 and answers and set(answers) == {200}
    _wait_for(lambda: listening(served.port) == 2, 120, "a replacement does not listen")
    assert len(set(instances_at_once(served.url, TOGETHER, workers=now))) == 2


async def test_sigterm_stops_every_worker_within_the_grace_time_with_streams_open(tmp_path: Path) -> None:
    server = _serve(tmp_path)
    try:
        workers = worker_pids(_root(server))
        async with clients_per_process(server.url, 2, each=1) as clients:
            doctor = await login(clients[0][0], "doctor1")
            async with AsyncExitStack() as streams:
                for n, (client,) in enumerate(clients):  # a stream open on each worker, which never ends by itself
                    headers = {"Authorization": f"Bearer {doctor.token}", "X-Client-Id": f"term-{n}"}
                    assert (await client.put(LIST, headers=headers)).status_code == 200
                    stream = await streams.enter_async_context(open_stream(client, headers=headers))
                    assert (await stream.next()).data == ""
                started = time.monotonic()
                assert server.process is not None
                server.process.send_signal(signal.SIGTERM)
                status = await asyncio.to_thread(server.process.wait, SHUTDOWN_GRACE_SECONDS + 15)
                took = time.monotonic() - started
        assert status == 0
        assert took < SHUTDOWN_GRACE_SECONDS + 10, took
        assert not [pid for pid in workers if alive(pid)]
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
    finally:
        server.stop()


def test_each_worker_gets_a_socket_of_its_own_on_one_port_or_all_share_one() -> None:
    own = bind_sockets("127.0.0.1", 0, workers=3, reuse_port=True)
    shared = bind_sockets("127.0.0.1", 0, workers=3, reuse_port=False)
    try:
        assert len({id(s) for s in own}) == 3 and len({s.getsockname() for s in own}) == 1
        assert all(s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) for s in own)
        assert len({id(s) for s in shared}) == 1
        assert not shared[0].getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT)
    finally:
        for sock in {id(s): s for s in own + shared}.values():
            sock.close()


def test_workers_that_cannot_start_stop_the_supervisor_with_uvicorns_status_instead_of_restarting() -> None:
    script = (
        "import sys, uvicorn\n"
        "from doctordesk.supervisor import Supervisor\n"
        "config = uvicorn.Config('doctordesk.no_such_module:app', host='127.0.0.1', port=0)\n"
        "sys.exit(Supervisor(config, workers=2).run())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == STARTUP_FAILURE, output
    assert output.count("failed to start; stopping") == 1
    assert output.count("Could not import module") <= 2, output  # each worker tried once; none was started again
