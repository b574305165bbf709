"""The database handle: one async engine, sessions, and the SQLite settings the embedded mode needs.

SQLite has one write lock per database. Writers of one process take turns on an in-process queue (first come,
first served) before they ask SQLite for it, so SQLite's busy handler, which sleeps and retries with growing
pauses, is left only for writers of other processes (``doctordesk worker``, a second ``serve``). Under ten
concurrent writers the busy handler's sleeps made the slowest wait seconds while the lock stood free between them.
The processes of one host then take turns too, on a lock file beside the database (``HostTurns``: ``flock``,
waited for in a thread, so a waiting writer spends no CPU): without it the workers of ``serve --workers N`` asked
SQLite again and again while another worker wrote (each refused ``BEGIN IMMEDIATE`` a session, a connection and an
exception; 1.6 per chat send at 10 in flight with two workers). SQLite's lock stays what makes writes safe; the
turns only keep writers from asking it in vain.

PostgreSQL connections are not pinged before each use (a round trip per transaction, about a tenth of a cheap
read's time). A connection the server dropped while it sat in the pool (a restart, ``pg_terminate_backend``, an idle
timeout) is known to the driver as soon as the server closed its socket, with no round trip: the pool's checkout
replaces it (``_replace_closed``). One dropped while a transaction used it fails that unit of work, which then
answers "busy, nothing changed, try again" (``ServiceBusy``, 503) rather than an internal error; the pool replaces
every connection older than the failure.

A pool opens a connection when a checkout finds none free and keeps it (no overflow opened for a burst and closed
after it): a process holds as many as its busiest moment needed, at most the pool's size. The pools are bounded and
do not make a request wait long for a connection: when every connection is in use longer than ``pool_wait_ms``
(``DOCTORDESK_DB_POOL_WAIT_MS``), the request is answered "busy, nothing changed, try again" (``ServiceBusy``, 503
with ``Retry-After``) instead of queueing behind a burst for seconds. The size
(``DOCTORDESK_DB_POOL_SIZE``) defaults to ``default_pool_size``: what the machine's cores can keep busy
(docs/operations.md#database-pools).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from doctordesk.config import Settings
from doctordesk.domain.errors import ServiceBusy
from doctordesk.store import name_words, private_files
from doctordesk.store.secrets.encryption import SecretBox, attach, box_from_settings
from doctordesk.store.sqlite_inline import inline_connector, runs_inline

DEFAULT_LOCK_TIMEOUT_MS = 10_000
DEFAULT_POOL_WAIT_MS = 1000
BUSY_RETRY_SECONDS = 1  # what a busy answer's Retry-After says (whole seconds)


def default_pool_size(cpus: int | None = None) -> int:
    """The pool's size when ``DOCTORDESK_DB_POOL_SIZE`` is 0 (docs/operations.md#database-pools): a changed list
    poll costs ≈ 2–4 ms of this process's CPU (``bench_list_changed``), reads and render both under the interpreter's
    lock, so more reads in flight than a few per core only wait for the interpreter: 4 a core (at least 8), on both
    databases. On PostgreSQL each statement is a round trip through the event loop, so the requests holding a
    connection take turns statement by statement: with 30 in flight each waited behind all the others (spread
    shape at 10,000 lists: polls p99 130–149 ms with 30, 64–77 ms with 8)."""
    cores = max(1, cpus or os.cpu_count() or 1)
    return max(8, 4 * cores)


def _sqlite_pragmas(lock_timeout_ms: int, *, checkpoints: bool = True) -> Any:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        if not checkpoints:
            cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(lock_timeout_ms)}")
        cursor.close()

    return on_connect


def _sqlite_begin_immediate(conn: Any) -> None:
    # BEGIN IMMEDIATE takes the write lock up front, so two writers serialise instead of failing on upgrade.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def _sqlite_begin_deferred(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def create_engine(
    url: str,
    *,
    echo: bool = False,
    writer: bool = True,
    inline: bool = False,
    lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS,
    pool_size: int | None = None,
    pool_wait_ms: int = DEFAULT_POOL_WAIT_MS,
    inline_reads: bool = False,
) -> AsyncEngine:
    """An engine for ``url``; a statement waiting longer than ``lock_timeout_ms`` for another transaction's lock
    fails (SQLite: busy timeout, PostgreSQL: ``lock_timeout``) instead of holding the request indefinitely. At most
    ``pool_size`` connections (default ``default_pool_size``); a checkout that finds them all in use for
    ``pool_wait_ms`` raises the pool's ``TimeoutError`` (``Database`` makes it ``ServiceBusy``).
    ``inline`` (an SQLite file's writer, or with ``inline_reads`` its readers too): statements run on the event
    loop's thread (``sqlite_inline``) and a statement that meets another process's lock fails at once."""
    name_words.register()  # every ORM write of a patient through this engine keeps the name search's words
    parsed = make_url(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    size = pool_size or default_pool_size()
    wait = pool_wait_ms / 1000
    if sqlite:
        if parsed.database and parsed.database != ":memory:":
            private_files.private_file(Path(parsed.database))  # 0600: its WAL and SHM files take its mode
        if (writer or inline_reads) and inline and parsed.database and parsed.database != ":memory:":
            # Statements on the loop's thread; waiting for another process's lock is Database.transaction's job.
            engine = create_async_engine(
                url,
                echo=echo,
                async_creator=inline_connector(parsed.database),
                pool_size=size,
                max_overflow=0,
                pool_timeout=wait,
            )
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas(0, checkpoints=False))
            runs_inline(engine)
        else:
            # Every connection of the readers' pool is kept (no overflow): opening one in a burst took up to 2 s.
            a_file = bool(parsed.database) and parsed.database != ":memory:"
            pool: dict[str, Any] = {"pool_size": size, "max_overflow": 0} if a_file else {}
            engine = create_async_engine(
                url, echo=echo, connect_args={"timeout": lock_timeout_ms / 1000}, pool_timeout=wait, **pool
            )
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas(lock_timeout_ms))
        # Let SQLAlchemy drive transactions explicitly (pysqlite's own BEGIN handling is off).
        event.listen(engine.sync_engine, "connect", lambda c, _r: setattr(c, "isolation_level", None))
        event.listen(engine.sync_engine, "begin", _sqlite_begin_immediate if writer else _sqlite_begin_deferred)
        return engine
    # Every connection is kept once opened, as SQLite's readers are: with 10 kept and the rest opened for a burst and
    # closed after it, the spread load opened ~6 connections a second and they were its tail (docs/benchmarks.md).
    engine = create_async_engine(
        url,
        echo=echo,
        pool_size=size,
        max_overflow=0,
        pool_timeout=wait,
        connect_args={"server_settings": {"lock_timeout": str(int(lock_timeout_ms))}},
    )
    event.listen(engine.sync_engine, "checkout", _replace_closed)
    return engine


def _replace_closed(_dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A pooled PostgreSQL connection whose socket the server closed is replaced at checkout (the pool retries
    with a new one): the driver saw the close, no statement is sent to find out."""
    driver = record.driver_connection  # asyncpg's connection
    if driver is not None and driver.is_closed():
        raise DisconnectionError("the server closed this pooled connection")


@asynccontextmanager
async def _dropped_is_busy() -> AsyncIterator[None]:
    """A connection lost in the middle of a unit of work: nothing was committed, the client may try again."""
    try:
        yield
    except PoolTimeout as exc:  # every connection in use for the pool's wait bound: back-pressure, not a queue
        raise ServiceBusy(retry_after=BUSY_RETRY_SECONDS) from exc
    except DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
        raise ServiceBusy(retry_after=BUSY_RETRY_SECONDS) from exc


class Database:
    """Owns the engine; hands out sessions and transactions. ``secret_box``: the keys of the encrypted columns
    (store/encryption.py); a handle without them reads only secrets stored before encryption and writes none."""

    # SQLite: write-ahead log pages are copied into the database file after this many commits (off the loop).
    CHECKPOINT_EVERY = 200

    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS,
        secret_box: SecretBox | None = None,
        pool_size: int | None = None,
        pool_wait_ms: int = DEFAULT_POOL_WAIT_MS,
        inline_screen_reads: bool = True,
    ) -> None:
        self.url = url
        self.secret_box = secret_box
        self.lock_timeout = lock_timeout_ms / 1000
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        make = partial(create_engine, url, echo=echo, lock_timeout_ms=lock_timeout_ms, pool_size=pool_size)
        make = partial(make, pool_wait_ms=pool_wait_ms)
        self.engine = make(inline=True)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # SQLite: readers get their own engine with deferred transactions, so they never wait for the write lock.
        self.read_engine = make(writer=False) if self.is_sqlite else self.engine
        self.read_sessions = async_sessionmaker(self.read_engine, expire_on_commit=False)
        # SQLite: a screen's reads (a few small statements, each a hand-off to a thread and a wake-up of the loop
        # on the readers' engine) run on the loop's own thread instead: 27–35 % less CPU per changed list poll
        # (docs/benchmarks.md); long reads (reports, exports) stay on the readers' threads.
        # PostgreSQL: a screen's reads run without BEGIN and ROLLBACK (autocommit, the same pool): under READ
        # COMMITTED each statement takes its own snapshot inside a transaction too, so the transaction only cost
        # two more round trips through the loop per render (docs/operations.md#database-pools).
        if not self.is_sqlite:
            self.screen_read_engine = self.engine.execution_options(isolation_level="AUTOCOMMIT")
        elif inline_screen_reads and _a_file(url):
            self.screen_read_engine = make(writer=False, inline=True, inline_reads=True)
        else:
            self.screen_read_engine = self.read_engine
        self.screen_read_sessions = async_sessionmaker(self.screen_read_engine, expire_on_commit=False)
        if secret_box is not None:
            for engine in {self.engine, self.read_engine, self.screen_read_engine}:
                attach(engine, secret_box)
        self._commits = 0
        self._checkpoint: asyncio.Task[None] | None = None
        database = make_url(url).database if self.is_sqlite and _a_file(url) else None
        self._host_turns = HostTurns(f"{database}-writers.lock") if database else None

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        """The service's handle: its database and the secrets key (made in the data directory when unset)."""
        return cls(
            settings.database_url,
            lock_timeout_ms=settings.db_lock_timeout_ms,
            secret_box=box_from_settings(settings),
            pool_size=settings.db_pool_size,
            pool_wait_ms=settings.db_pool_wait_ms,
            inline_screen_reads=settings.db_sqlite_inline_screen_reads,
        )

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One unit of work: commits when the block ends, rolls back on any exception. On SQLite it first waits
        its turn among this process's writers, then for the database's write lock; on PostgreSQL for a connection
        of the pool (either together at most the lock timeout, then ``ServiceBusy``: nothing written)."""
        async with _dropped_is_busy():
            if not self.is_sqlite:
                connection = await self._connection_for_writing()
                try:
                    async with self.sessions(bind=connection) as session, session.begin():
                        yield session
                finally:
                    await connection.close()
                return
            async with self._sqlite_transaction() as session:
                yield session

    async def _connection_for_writing(self) -> AsyncConnection:
        """A connection of the pool for a write (PostgreSQL): it waits for one up to the lock timeout, in steps of
        the pool's wait bound (after which a read is answered busy), as SQLite's writers wait for their turn: in a
        burst of sends a refused write would come back a second later and wait again (docs/operations.md#database-
        pools). The pool's ``TimeoutError`` past the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.lock_timeout
        while True:
            try:
                return await self.engine.connect()
            except PoolTimeout:
                if loop.time() >= deadline:
                    raise

    @asynccontextmanager
    async def _sqlite_transaction(self) -> AsyncIterator[AsyncSession]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.lock_timeout
        turn = self._writer_turns()
        try:
            async with asyncio.timeout_at(deadline):
                await turn.acquire()
        except TimeoutError:
            raise ServiceBusy(retry_after=1) from None
        try:
            if self._host_turns is not None:
                await self._host_turns.acquire(deadline)
            try:
                session = await self._begin_writing(deadline)
                try:
                    yield session
                    await session.commit()
                except BaseException:
                    await session.rollback()
                    raise
                finally:
                    await session.close()
            finally:
                if self._host_turns is not None:
                    self._host_turns.release()
        finally:
            turn.release()
        self._commits += 1
        if self._commits % self.CHECKPOINT_EVERY == 0:
            self._start_checkpoint()

    async def _begin_writing(self, deadline: float) -> AsyncSession:
        """A session holding SQLite's write lock (BEGIN IMMEDIATE). The writer connection does not wait inside
        SQLite (that would stop the event loop): while another process writes, it asks again after a short
        asynchronous pause, until ``deadline``."""
        loop = asyncio.get_running_loop()
        pause = 0.001
        while True:
            session = self.sessions()
            try:
                await session.connection()
                return session
            except OperationalError as exc:
                await session.close()
                if not _is_busy(exc):
                    raise
            if loop.time() + pause > deadline:
                raise ServiceBusy(retry_after=1)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _start_checkpoint(self) -> None:
        if self._checkpoint is None or self._checkpoint.done():
            self._checkpoint = asyncio.get_running_loop().create_task(self.checkpoint())

    async def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file, on a reader's connection (its own thread), without
        waiting for readers or writers (PASSIVE). The writer's connection never does this itself."""
        if not self.is_sqlite:
            return
        async with self.read_engine.connect() as conn:
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _writer_turns(self) -> asyncio.Lock:
        """The queue of this process's SQLite writers (one per event loop: tests and tools run several)."""
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, asyncio.Lock())
        return self._turns[1]

    @asynccontextmanager
    async def read(self, *, screen: bool = False) -> AsyncIterator[AsyncSession]:
        """A read-only session (no write lock on SQLite). ``screen``: a few small statements on a request's path (a
        screen's render, a token's check; on SQLite they run on the loop's thread, ``screen_read_engine``)."""
        sessions = self.screen_read_sessions if screen else self.read_sessions
        async with _dropped_is_busy(), sessions() as session:
            yield session

    @property
    def pooled_engines(self) -> list[AsyncEngine]:
        """One engine for each pool of connections (SQLite: the writer's, the readers', the screens' readers';
        PostgreSQL: one, which the screens' autocommit engine shares)."""
        by_pool: dict[int, AsyncEngine] = {}
        for engine in (self.engine, self.read_engine, self.screen_read_engine):
            by_pool.setdefault(id(engine.sync_engine.pool), engine)
        return list(by_pool.values())

    async def dispose(self) -> None:
        if self._checkpoint is not None and not self._checkpoint.done():
            await asyncio.gather(self._checkpoint, return_exceptions=True)
        for engine in self.pooled_engines:
            await engine.dispose()
        if self._host_turns is not None:
            self._host_turns.close()


def _is_busy(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "locked" in message or "busy" in message


def _a_file(url: str) -> bool:
    database = make_url(url).database
    return bool(database) and database != ":memory:"


class HostTurns:
    """The turns of the writers of every process of this host on one SQLite database: an exclusive ``flock`` on
    ``path`` (made 0600 beside the database), held from before ``BEGIN IMMEDIATE`` until the transaction ended.
    ``acquire`` takes it at once when it is free, else waits for it in a thread (the event loop goes on; the
    waiting costs no CPU) until ``deadline`` (then ``ServiceBusy``). One process's writers already take turns among
    themselves (``Database._writer_turns``), so at most one of them waits here. A wait that gave up lets go of the
    lock as soon as its thread gets it. Processes that do not take the turns (an ``sqlite3`` shell) are still met by
    SQLite's own lock (``Database._begin_writing``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

    async def acquire(self, deadline: float) -> None:
        try:
            fd = self._open()
        except OSError:  # no lock file here (a read-only directory): SQLite's lock alone, as before
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waiting = asyncio.get_running_loop().run_in_executor(None, fcntl.flock, fd, fcntl.LOCK_EX)
        try:
            async with asyncio.timeout_at(deadline):
                await asyncio.shield(waiting)
        except OSError:  # the lock could not be taken: SQLite's lock alone, as before
            return
        except TimeoutError:
            waiting.add_done_callback(partial(self._let_go, fd))
            raise ServiceBusy(retry_after=BUSY_RETRY_SECONDS) from None
        except asyncio.CancelledError:
            waiting.add_done_callback(partial(self._let_go, fd))
            raise

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _let_go(self, fd: int, waited: asyncio.Future[None]) -> None:
        """A wait for the turn that gave up: the lock its thread took after all is let go at once (unless the file
        was closed meanwhile, which let go of it)."""
        if fd == self._fd and not waited.cancelled() and waited.exception() is None:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (the database is disposed of; a later write opens it again)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
