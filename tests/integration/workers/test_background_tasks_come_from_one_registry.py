"""Every background task a process runs comes from one registry (``bootstrap.REGISTRY``): the app starts no task
of its own beside it; ``serve`` with every ``*_in_process`` setting off and ``doctordesk worker`` together run each
task exactly once; a process tells its tasks to stop together and stops every one it started."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from doctordesk.app import create_app
from doctordesk.bootstrap import REGISTRY, Assembly, Role, assemble, jobs_for
from doctordesk.config import Settings
from doctordesk.workers.background import Running

NAMES = [job.name for job in REGISTRY]
MOVABLE = [job.in_process for job in REGISTRY if job.in_process is not None]


@pytest.fixture
def reachable(database_url: str, settings_factory: Callable[..., Settings]) -> Callable[..., Settings]:
    """Settings under which every task of the registry is configured (a relay and a push partner, never reached:
    nothing is queued)."""

    def make(**overrides: Any) -> Settings:
        values = {"smtp_url": "smtp://127.0.0.1:9", "mail_from": "clinic@example.org", "push_url": "http://127.0.0.1:9"}
        return settings_factory(database_url, **{**values, **overrides})

    return make


def test_every_in_process_setting_of_the_registry_is_a_setting_that_defaults_to_on():
    assert MOVABLE and len(set(MOVABLE)) == len(MOVABLE)
    for name in MOVABLE:
        assert Settings.model_fields[name].default is True, name


def test_each_in_process_setting_moves_its_own_task_and_no_other(reachable):
    everything = reachable()
    assert [job.name for job in jobs_for(Role.SERVE, everything)] == NAMES
    for job in REGISTRY:
        if job.in_process is None:
            continue
        without = reachable(**{job.in_process: False})
        assert [j.name for j in jobs_for(Role.SERVE, without)] == [n for n in NAMES if n != job.name]
        assert job.name in [j.name for j in jobs_for(Role.WORKER, without)]


async def test_the_registry_lists_every_background_task_the_app_starts(reachable):
    app = create_app(reachable())
    before = asyncio.all_tasks()
    async with app.router.lifespan_context(app):
        started = {task.get_name() for task in asyncio.all_tasks() - before}
        assembly: Assembly = app.state.assembly
        assert assembly.tasks.names == NAMES  # every task built, in the registry's order
    assert started == set(NAMES)


async def test_serve_with_every_in_process_setting_off_and_a_worker_run_each_task_exactly_once(reachable):
    settings = reachable(**dict.fromkeys(MOVABLE, False))
    app = create_app(settings)
    worker = assemble(settings, role=Role.WORKER)
    async with app.router.lifespan_context(app):
        await worker.start()
        await worker.stop()
    served: Assembly = app.state.assembly
    assert Counter(served.tasks.started + worker.tasks.started) == Counter(NAMES)
    assert "waitlist-rounds" in worker.tasks.started and "reminder-sender" in worker.tasks.started


async def test_a_process_stops_every_task_it_started(reachable):
    app = create_app(reachable())
    worker = assemble(reachable(), role=Role.WORKER)
    async with app.router.lifespan_context(app):
        await worker.start()
        await worker.stop()
    served: Assembly = app.state.assembly
    for process in (served, worker):
        assert process.tasks.started and Counter(process.tasks.stopped) == Counter(process.tasks.started)


class _Held:
    """A task whose work in hand ends when the test says so."""

    def __init__(self, name: str, release: asyncio.Event, told: list[str]) -> None:
        self.name, self.release, self.told = name, release, told

    def start(self) -> None:
        return None

    async def stop(self) -> None:
        self.told.append(self.name)
        await self.release.wait()

    def wake(self) -> None:
        return None


async def test_every_task_is_told_to_stop_while_another_still_ends_its_work():
    """One task finishing a round does not keep the others running: all are told at once, and the stop returns
    once each has ended."""
    release, told = asyncio.Event(), []
    running = Running([(_Held(name, release, told), lambda _e: False) for name in ("first", "second", "third")])
    running.start()
    stopping = asyncio.create_task(running.stop())
    for _ in range(100):  # turns of the loop, not time: each stop runs up to its wait at the first
        if len(told) == 3:
            break
        await asyncio.sleep(0)
    assert sorted(told) == ["first", "second", "third"] and not stopping.done() and running.stopped == []
    release.set()
    await stopping
    assert sorted(running.stopped) == ["first", "second", "third"]
