"""The unit of work: one transaction, the events it emits, hooks that write in that same transaction (the push
outbox), and publication to the bus only after commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.events import DomainEvent
from doctordesk.runtime import Runtime


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
