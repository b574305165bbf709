"""The SQLite writer connection that runs its statements on the event loop's own thread.

aiosqlite hands every call (cursor, execute, fetch, commit) to a worker thread and wakes the event loop when it is
done. A request's write transaction makes a dozen such calls while it holds the database's write lock, and on a busy
loop each wake-up waits behind every other ready task: the lock was held for the loop's queue, not for SQLite's
work, which takes microseconds per statement in WAL mode. The writer's connection therefore runs each call where it
is made. Two things could still block the loop and are kept away from it:

- waiting for another process's write lock: the connection's busy timeout is 0, and ``Database.transaction``
  retries ``BEGIN IMMEDIATE`` with short asynchronous pauses until the lock timeout;
- checkpoints (copying the write-ahead log into the database file, with an fsync): automatic checkpoints are off on
  this connection and ``Checkpointer`` runs them on a thread of its own.
"""

from __future__ import annotations

import sqlite3
from functools import partial
from typing import Any

import aiosqlite


class InlineConnection(aiosqlite.Connection):
    """An aiosqlite connection whose calls run at once on the caller's thread (opened and closed on its worker)."""

    async def _execute(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)


def inline_connector(database: str) -> Any:
    """``async_creator`` for SQLAlchemy: a writer connection to ``database`` (a file path)."""

    async def connect() -> aiosqlite.Connection:
        connector = partial(sqlite3.connect, database, check_same_thread=False, isolation_level=None)
        connection = InlineConnection(connector, 64)
        connection._thread.daemon = True
        return await connection

    return connect
