"""What every background task of a process looks like to the process that runs it (``bootstrap.py``): a name, a
start, a stop and a wake-up; and the tasks one process runs, started in order and stopped together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.lease import DrainLoop

log = logging.getLogger(__name__)


class Task(Protocol):
    """A background task: started once, stopped once (after the work in hand), woken when its work may be due."""

    name: str

    def start(self) -> None: ...

    async def stop(self) -> None: ...

    def wake(self) -> None: ...


class Periodic:
    """A coroutine run as a task named ``name`` until ``stopping`` is set (``run`` is handed the event), then given
    ``grace`` seconds to end its round before it is cancelled (a database call is not cut off meanwhile).
    ``on_stop`` tells a coroutine that watches something else than the event to end; ``after`` runs once it
    has; ``on_wake`` is what waking it does."""

    def __init__(
        self,
        name: str,
        run: Callable[[asyncio.Event], Awaitable[None]],
        *,
        grace: float = 5.0,
        on_stop: Callable[[], None] = lambda: None,
        after: Callable[[], None] = lambda: None,
        on_wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = name
        self._run = run
        self.grace = grace
        self._on_stop, self._after, self._on_wake = on_stop, after, on_wake
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run_until_stopped(), name=self.name)

    async def _run_until_stopped(self) -> None:
        await self._run(self._stopping)

    def wake(self) -> None:
        self._on_wake()

    async def stop(self) -> None:
        self._stopping.set()
        self._on_stop()
        task = self._task
        if task is not None:
            if self.grace > 0:
                await asyncio.wait({task}, timeout=self.grace)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                try:
                    await task
                except Exception:  # the task logs its own failures; this one ended it
                    log.exception("%s ended with an error", self.name)
        self._after()


class Running:
    """The background tasks of one process, in the order they start; each with what wakes it (an event's test)."""

    def __init__(self, tasks: Sequence[tuple[Task, Callable[[DomainEvent], bool]]]) -> None:
        self.tasks = list(tasks)
        self.started: list[str] = []
        self.stopped: list[str] = []

    @property
    def names(self) -> list[str]:
        return [task.name for task, _ in self.tasks]

    def start(self) -> None:
        for task, _ in self.tasks:
            task.start()
            self.started.append(task.name)

    async def stop(self) -> None:
        """Stop every task, all told at once, each ending after the work in hand: one task finishing a round does
        not keep the others running (and starting rounds of their own) meanwhile. No task's stop needs another
        still running: what a task queues while it stops waits in its outbox for the next start, as it would
        have in any order (``doctordesk worker --once`` drains in the registry's order before it stops).
        ``stopped`` lists them as they ended; the first error, if any, is raised once every task has ended."""

        async def stop(task: Task) -> None:
            await task.stop()
            self.stopped.append(task.name)

        ended = await asyncio.gather(*(stop(task) for task, _ in reversed(self.tasks)), return_exceptions=True)
        for error in ended:
            if isinstance(error, BaseException):
                raise error

    def on_event(self, event: DomainEvent) -> None:
        """Wake the tasks ``event`` may have given work (they poll as well)."""
        for task, wakes in self.tasks:
            if wakes(event):
                task.wake()

    def woken_by(self, event: DomainEvent) -> bool:
        """Whether ``event`` wakes one of the tasks."""
        return any(wakes(event) for _, wakes in self.tasks)

    def wake_all(self) -> None:
        """Wake every task (the bus reconnected: events may have been missed meanwhile)."""
        for task, _ in self.tasks:
            task.wake()

    async def drain(self) -> None:
        """One pass over the tasks that drain an outbox or a queue, in order: each until nothing is due now."""
        for task, _ in self.tasks:
            if isinstance(task, DrainLoop):
                await task.drain()
