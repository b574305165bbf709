"""The SQLite connections that run their statements on the event loop's own thread (the writer's, screens' reads).

aiosqlite hands every call (cursor, execute, fetch, commit) to a worker thread and wakes the event loop when it is
done. A request's write transaction makes a dozen such calls while it holds the database's write lock, and on a busy
loop each wake-up waits behind every other ready task: the lock was held for the loop's queue, not for SQLite's
work, which takes microseconds per statement in WAL mode. The writer's connection therefore runs each call where it
is made. Two things could still block the loop and are kept away from it:

- waiting for another process's write lock: the connection's busy timeout is 0, and ``Database.transaction``
  retries ``BEGIN IMMEDIATE`` with short asynchronous pauses until the lock timeout;
- checkpoints (copying the write-ahead log into the database file, with an fsync): automatic checkpoints are off on
  this connection and ``Checkpointer`` runs them on a thread of its own.

Screens' small reads run on such connections too (``Database.read(screen=True)``). Every render of an open list runs
the same few statements, built once (``functools.cache``), each reading a few rows, and SQLAlchemy's execution of
such a statement cost several times what SQLite did for it: about 0.05 ms a statement besides its parameters and
values, and 0.2 ms for the list's first pages (20 columns of 14 rows) against SQLite's 0.06 (docs/benchmarks.md).
``planned_rows`` runs such a statement from a plan made once per statement and per length of each of its lists (an
expanding parameter): the SQL text and the order of its parameters from SQLAlchemy's compiler, the conversion of
each parameter and result column from the column's type on the engine's dialect, so values go in and come out as
SQLAlchemy converts them (UTC times, booleans, sealed text). The statement runs in the session's transaction, on its
connection. On any other connection (PostgreSQL, SQLite's readers on their threads) the session executes the
statement. Only for statements that are kept: a plan is made once per statement object.
"""

from __future__ import annotations

import functools
import sqlite3
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import aiosqlite
from sqlalchemy import Select
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.sql.compiler import SQLCompiler


class InlineConnection(aiosqlite.Connection):
    """An aiosqlite connection whose calls run at once on the caller's thread (opened and closed on its worker)."""

    async def _execute(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    def rows(self, sql: str, parameters: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Every row of one statement, run at once on this thread (``planned_rows``)."""
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        found: list[tuple[Any, ...]] = self._connection.execute(sql, parameters).fetchall()
        return found


# Engines whose connections are ``inline_connector``'s (``planned_rows`` runs its plans on them only).
_INLINE_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


def inline_connector(database: str) -> Any:
    """``async_creator`` for SQLAlchemy: a writer connection to ``database`` (a file path)."""

    async def connect() -> aiosqlite.Connection:
        connector = partial(sqlite3.connect, database, check_same_thread=False, isolation_level=None)
        connection = InlineConnection(connector, 64)
        connection._thread.daemon = True
        return await connection

    return connect


def runs_inline(engine: AsyncEngine) -> None:
    """Record that ``engine``'s connections are ``inline_connector``'s."""
    _INLINE_ENGINES.add(engine.sync_engine)


# --- screens' reads of statements built once ---------------------------------------------------------------------

Processor = Callable[[Any], Any]
Row = tuple[Any, ...]
PLANS_PER_STATEMENT = 128  # lengths of its lists (each its own SQL text) and names given; forgotten all at once beyond
_DRIVER = "sqlite_inline.driver"  # in the session's info: its transaction, and that transaction's connection


@dataclass(frozen=True, slots=True)
class _Plan:
    """One SQL text: its parameters in order, each a parameter's name (the item of a list: the list's name and
    the item's index), or the statement's own value, converted once."""

    sql: str
    parameters: tuple[tuple[str, int, Processor | None] | tuple[None, Any, None], ...]

    def values(self, params: Mapping[str, Any]) -> list[Any]:
        out = []
        for name, at, convert in self.parameters:
            if name is None:
                out.append(at)  # the statement's own value, converted when the plan was made
                continue
            value = params[name] if at < 0 else params[name][at]
            out.append(value if convert is None else convert(value))
        return out


@dataclass(slots=True)
class _Statement:
    """A statement compiled for one dialect, its plans by the lengths of its lists."""

    compiled: SQLCompiler
    dialect: Dialect
    lists: tuple[str, ...]  # its expanding parameters
    results: tuple[tuple[int, Processor], ...]  # the result columns that are converted, and how
    plans: dict[tuple[tuple[int, ...], tuple[str, ...]], _Plan] = field(default_factory=dict)

    def plan(self, params: Mapping[str, Any]) -> _Plan:
        """The plan for the lengths of ``params``' lists and the parameters it names (a parameter the statement
        holds a value of is taken from ``params`` only when named there)."""
        key = (tuple(len(params[name]) for name in self.lists), tuple(params))
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= PLANS_PER_STATEMENT:
                self.plans.clear()
            plan = self.plans[key] = self._planned(params)
        return plan

    def _planned(self, params: Mapping[str, Any]) -> _Plan:
        binds = self.compiled.binds
        given = {name: binds[name].expanding for name in params if name in binds}
        shape = {name: [None] * len(params[name]) if expanding else None for name, expanding in given.items()}
        expanded = self.compiled.construct_expanded_state(shape, escape_names=False)
        expansion = expanded.parameter_expansion
        item_of = {item: (name, i) for name, items in expansion.items() for i, item in enumerate(items)}
        parameters: list[tuple[str, int, Processor | None] | tuple[None, Any, None]] = []
        for position in expanded.positiontup or ():
            name, at = item_of.get(position, (position, -1))
            convert = self._bind_processor(name)
            if name in given:
                parameters.append((name, at, convert))
            else:
                own = expanded.parameters[position]
                parameters.append((None, own if convert is None else convert(own), None))
        return _Plan(expanded.statement, tuple(parameters))

    def _bind_processor(self, name: str) -> Processor | None:
        bind_type = self.compiled.binds[name].type
        return bind_type.dialect_impl(self.dialect).bind_processor(self.dialect)


@functools.lru_cache(maxsize=256)
def _statement(statement: Select[*tuple[Any, ...]], dialect: Dialect) -> _Statement:
    compiled = statement.compile(dialect=dialect)
    assert isinstance(compiled, SQLCompiler)
    lists = tuple(name for name, bind in compiled.binds.items() if bind.expanding)
    if any(bind.literal_execute for bind in compiled.binds.values()):
        raise ValueError("a statement with values rendered into its text is not planned once")
    results = []
    for i, column in enumerate(statement.selected_columns):
        convert = column.type.dialect_impl(dialect).result_processor(dialect, None)
        if convert is not None:
            results.append((i, convert))
    return _Statement(compiled, dialect, lists, tuple(results))


async def planned_rows(
    session: AsyncSession, statement: Select[*tuple[Any, ...]], params: Mapping[str, Any]
) -> list[Row]:
    """The rows of ``statement`` (built once and kept) with ``params``, as tuples in the order of its columns, read in
    the session's transaction."""
    bind = session.bind
    if not isinstance(bind, AsyncEngine) or bind.sync_engine not in _INLINE_ENGINES:
        return [tuple(row) for row in await session.execute(statement, params)]
    transaction = session.sync_session.get_transaction()
    known = session.info.get(_DRIVER)
    if known is None or transaction is None or known[0] is not transaction:
        connection = await session.connection()  # the session's transaction begins here if it had not yet
        driver = connection.sync_connection.connection.driver_connection if connection.sync_connection else None
        known = session.info[_DRIVER] = (session.sync_session.get_transaction(), driver, connection.dialect)
    _, driver, dialect = known
    if not isinstance(driver, InlineConnection):
        return [tuple(row) for row in await session.execute(statement, params)]
    kept = _statement(statement, dialect)
    plan = kept.plan(params)
    try:
        found = driver.rows(plan.sql, plan.values(params))
    except sqlite3.Error as exc:  # as SQLAlchemy raises it (``Database.read`` makes a lost connection "busy")
        raise DBAPIError.instance(plan.sql, None, exc, sqlite3.Error) from exc
    if not kept.results:
        return list(found)
    out = []
    for row in found:
        values = list(row)
        for i, convert in kept.results:
            values[i] = convert(values[i])
        out.append(tuple(values))
    return out
