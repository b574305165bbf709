"""The unit of work: one transaction, the events it emits, hooks that write in that same transaction (the push
outbox), and publication to the bus only after commit.

These are the services' two doors to a read-write transaction (``tests/unit/test_write_doors.py`` holds it): a
use case writes through ``unit_of_work``; background and bulk work that has no runtime writes through
``worker_transaction``. Reads use ``db.read()``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.events import DomainEvent
from doctordesk.runtime import Runtime
from doctordesk.store.db import Database


@dataclass
class UnitOfWork:
    session: AsyncSession
    events: list[DomainEvent] = field(default_factory=list)

    def emit(self, *events: DomainEvent) -> None:
        """Record events; they are published when (and only if) the transaction commits."""
        self.events.extend(events)


@asynccontextmanager
async def unit_of_work(rt: Runtime) -> AsyncIterator[UnitOfWork]:
    async with rt.db.transaction() as session:
        uow = UnitOfWork(session)
        yield uow
        await run_hooks(rt, uow)
    await rt.publish(uow.events)


async def run_hooks(rt: Runtime, uow: UnitOfWork) -> None:
    """The hooks that write in the transaction (the push outbox), for a unit of work over a transaction another
    step opened (``unit_of_work`` calls it itself)."""
    for hook in rt.transaction_hooks:
        await hook(uow.session, uow.events)


def worker_transaction(db: Database) -> AbstractAsyncContextManager[AsyncSession]:
    """A read-write transaction outside a unit of work: no events, no hooks, nothing published. Right only for
    work that runs without a runtime and is no user's action: a worker's lease (claim, renew, hand over, settle
    the rows it drains from an outbox), one batch of a bulk job (an import, an export, pruning or sweeping old
    rows), each committing by itself. Such work tells others itself when it must (a worker wakes its loops; the
    caller publishes what it returns). A use case, even one that emits nothing, uses ``unit_of_work``."""
    return db.transaction()
