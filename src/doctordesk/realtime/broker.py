"""The event bus of one host without Redis: a small broker on a Unix socket that ``serve --workers N`` runs in its
supervising process, and every worker joins (``realtime/socket_bus.py``).

Lines of JSON both ways. On connecting a worker is sent ``hello``: the bus's epoch, the key that seals state
tokens, the last sequence number and the mark of every topic. A worker's ``publish`` gets the next number and is
sent, numbered, to every worker (its sender included, which delivers its own events then): one order for all.
``set`` and ``get`` keep small values (presence) with an expiry. The socket is the owner's alone (mode 0600).

A worker that does not read what it is sent (stuck, or far behind) is not waited for: the broker never blocks the
others on it. Once more than ``send_limit`` bytes wait unsent on its connection, the broker drops that connection;
the worker joins again (as after any loss: the bus's state adopted afresh, its screens rendered once, its open
streams told to refresh and their tokens re-checked), so it catches up instead of falling further behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from doctordesk.realtime.bus import from_wire, to_wire
from doctordesk.screens.state import Revisions
from doctordesk.store.private_files import private_dir

log = logging.getLogger(__name__)

MAX_SOCKET_PATH = 100  # bytes: a Unix socket path is at most 107 on Linux, 103 on macOS
LINE_LIMIT = 64 * 1024 * 1024  # one line (a hello with every topic's mark, or a large event batch)
# Bytes that may wait unsent to one worker before the broker drops its connection (a few thousand batches).
SEND_LIMIT = 8 * 1024 * 1024


class BrokerError(RuntimeError):
    """The broker cannot start here; the message says why and what to do."""


class Broker:
    def __init__(self, *, send_limit: int = SEND_LIMIT) -> None:
        self.send_limit = send_limit
        self.epoch = secrets.token_hex(4)
        self.key = secrets.token_bytes(32)
        self.seq = 0
        self.revisions = Revisions()  # the marks, forgotten as every process forgets them
        self.values: dict[str, tuple[str, float]] = {}
        self.writers: set[asyncio.StreamWriter] = set()

    def hello(self) -> dict[str, Any]:
        return {"hello": {"epoch": self.epoch, "key": self.key.hex(), "seq": self.seq, "marks": self.revisions.marks}}

    async def serve(self, path: Path, ready: threading.Event | None = None) -> None:
        server = await asyncio.start_unix_server(self._client, path=str(path), limit=LINE_LIMIT)
        os.chmod(path, 0o600)
        if ready is not None:
            ready.set()
        try:
            async with server:
                await server.serve_forever()
        finally:
            for writer in list(self.writers):
                writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_line(self.hello()))
        self.writers.add(writer)
        try:
            while line := await reader.readline():
                self._handle(from_wire(line), writer, line)
                await writer.drain()
        except (ValueError, KeyError, TypeError, AttributeError, ConnectionError, asyncio.LimitOverrunError) as exc:
            log.warning("event bus broker: dropped a worker's connection (%s)", exc)
        finally:
            self.writers.discard(writer)
            writer.close()

    def _handle(self, body: dict[str, Any], writer: asyncio.StreamWriter, line: bytes = b"") -> None:
        op = body.get("op")
        if op == "publish":
            self.seq += 1
            topics = body.get("topics")
            if not isinstance(topics, list):  # a batch that does not say its topics: they are in its events
                topics = [t for e in body.get("events", []) for t in e.get("topics", [])]
            self.revisions.bump(topics, self.seq)
            out = _numbered(self.seq, body, line)
            for other in list(self.writers):
                other.write(out)
                if other.transport.get_write_buffer_size() > self.send_limit:
                    self._drop_lagging(other)
        elif op == "set":
            self.values[str(body["key"])] = (str(body["value"]), time.monotonic() + float(body["ttl"]))
            if body.get("rid") is not None:  # the worker waits until the value is here (``SocketBus.remember``)
                writer.write(_line({"rid": body["rid"]}))
        elif op == "get":
            value, until = self.values.get(str(body["key"]), (None, 0.0))
            writer.write(_line({"rid": body.get("rid"), "value": value if until > time.monotonic() else None}))
            if len(self.values) > 100_000:
                now = time.monotonic()
                self.values = {k: v for k, v in self.values.items() if v[1] > now}

    def _drop_lagging(self, writer: asyncio.StreamWriter) -> None:
        """A worker that lets more than ``send_limit`` bytes wait: dropped at once (what waits is discarded); it
        joins again and catches up from the bus's state."""
        log.warning("event bus broker: a worker fell %d bytes behind; dropped it to join again", self.send_limit)
        self.writers.discard(writer)
        writer.transport.abort()


def _numbered(seq: int, body: dict[str, Any], line: bytes) -> bytes:
    """The batch of the publish ``body`` (read from ``line``) with its number, as sent to every worker: the line
    as the worker wrote it with ``seq`` put in front (an object's keys are read by name; the worker's ``op`` is
    ignored), not encoded again."""
    stripped = line.strip()
    if stripped.startswith(b"{") and stripped.endswith(b"}"):
        return b'{"seq":%d,%s\n' % (seq, stripped[1:])
    fields = ("origin", "rid", "kinds", "topics")
    return _line({"seq": seq, **{k: body[k] for k in fields if k in body}, "events": body.get("events", [])})


def _line(body: dict[str, Any]) -> bytes:
    return to_wire(body)


def start_in_thread(path: Path) -> Path:
    """Run a broker on ``path`` in a thread of this process (for as long as it lives); the path it listens on.
    Refuses (``BrokerError``) when the path is too long for a socket, or another broker answers there."""
    path = path.absolute()
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise BrokerError(
            f"the event bus socket {path} is longer than {MAX_SOCKET_PATH} bytes; "
            "set DOCTORDESK_DATA_DIR to a shorter directory, or DOCTORDESK_REDIS_URL"
        )
    private_dir(path.parent)
    if path.exists():
        if _answers(path):
            raise BrokerError(f"another doctordesk serve already runs its event bus at {path}")
        path.unlink()
    ready = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(Broker().serve(path, ready))
        except BaseException as exc:  # reported to the starting thread, or logged once running
            failed.append(exc)
            ready.set()
            log.exception("event bus broker stopped")

    threading.Thread(target=run, name="doctordesk-bus-broker", daemon=True).start()
    ready.wait(10.0)
    if failed or not ready.is_set():
        raise BrokerError(f"could not start the event bus at {path}: {failed[0] if failed else 'no answer'}")
    return path


def _answers(path: Path) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        with contextlib.suppress(OSError):
            probe.connect(str(path))
            return True
    return False
