"""The sync rules of spec 6.1 and the poll cycle, on a virtual clock with a scripted service (pure client logic)."""

from __future__ import annotations

from typing import Any

import pytest

from doctordesk.client import Client, User
from doctordesk.realtime import message
from tests.support.fake_service import FakeScheduler, FakeService, fake_client, page, settle, update

VECTORS: dict[str, Any] = message.load_vectors()
LIST = "/profile/appointments"
REVIEW = "/profile/appointments/7/approve"
USER = User(1, "doctor1", "doctor", "Dr. Anna Berger")


def list_page(timeout: int = 30) -> dict[str, Any]:
    return page(
        "appointment-list", LIST, [{"id": "title", "ref": "title", "type": "Heading", "value": "A"}], timeout=timeout
    )


async def logged_in(service: FakeService, scheduler: FakeScheduler) -> Client:
    client = fake_client(service, scheduler)
    await client.use_token("token", USER)
    return client


@pytest.fixture
def service() -> FakeService:
    s = FakeService()
    s.pages[LIST] = list_page()
    s.pages[REVIEW] = page(
        "review-and-approve", REVIEW, [{"id": "approve", "ref": "approve", "type": "Button"}], timeout=20
    )
    return s


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler()


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: repr(v["message"])[:60])
async def test_every_shared_vector_leads_to_the_requests_spec_6_1_asks(
    vector: dict[str, Any], service: FakeService, scheduler: FakeScheduler
) -> None:
    """Whatever screen is open, a valid vector's timeout polls it and its endpoint is PATCHed; invalid: nothing."""
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(REVIEW)
        before = len(service.seen)
        armed = scheduler.pending()
        await client.handle_message(vector["message"])
        await settle(client)
        sent = service.requests()[before:]
        expected: list[tuple[str, str]] = []
        if vector["valid"] and vector["timeout"]:
            expected.append(("PATCH", screen.poll_endpoint))
        if vector["valid"] and vector["endpoint"] and not (vector["timeout"] and vector["endpoint"] == REVIEW):
            expected.append(("PATCH", vector["endpoint"]))
        assert sorted(sent) == sorted(expected)
        if vector["valid"] and vector["timeout"]:
            assert scheduler.pending() == [scheduler.now + 20]  # cancelled, then restarted by the poll
        else:
            assert scheduler.pending() == armed


async def test_a_page_is_polled_at_its_timeout_and_again_after_each_poll(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        assert scheduler.pending() == [30]
        await scheduler.advance(29.9, client)
        assert service.requests("PATCH") == []
        await scheduler.advance(0.1, client)
        assert service.requests("PATCH") == [("PATCH", LIST)]
        await scheduler.advance(30, client)
        assert service.requests("PATCH") == [("PATCH", LIST)] * 2
        assert scheduler.pending() == [90]


async def test_a_new_timeout_in_an_update_set_sets_the_next_poll(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        service.queue("PATCH", LIST, update("appointment-list", timeout=5))
        await scheduler.advance(30, client)
        assert scheduler.pending() == [35]


async def test_polling_goes_on_while_a_stream_is_open(service, scheduler) -> None:
    """Rule 7: messages do not stop the poll cycle."""
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await client.handle_message(LIST)
        await settle(client)
        await scheduler.advance(30, client)
        assert service.requests("PATCH") == [("PATCH", LIST)] * 2


async def test_timeout_cancels_every_timer_then_polls_each_open_screen(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await scheduler.advance(10, client)
        await client.open(REVIEW)
        assert scheduler.pending() == [30, 30]
        await client.handle_message("Timeout")
        await settle(client)
        assert sorted(service.requests("PATCH")) == [("PATCH", LIST), ("PATCH", REVIEW)]
        assert scheduler.pending() == [30, 40]  # both restarted now (t=10) at their own timeouts


async def test_an_endpoint_is_patched_without_touching_the_poll_timer(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(LIST)
        service.queue(
            "PATCH",
            LIST,
            update("appointment-list", [{"op": "update", "id": "title", "set": {"value": "B"}}], timeout=5),
        )
        await scheduler.advance(12, client)
        await client.handle_message(LIST)
        await settle(client)
        assert screen.element("title")["value"] == "B"
        assert service.requests("PATCH") == [("PATCH", LIST)]
        assert scheduler.pending() == [30]  # the timer armed at t=0 still stands
        assert screen.timeout == 5  # the next cycle uses the new timeout


async def test_an_endpoint_goes_to_the_screen_that_polls_it(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await client.open(REVIEW)
        await client.handle_message(LIST)
        await settle(client)
        patches = [s for s in service.seen if s.method == "PATCH"]
        assert [(s.path, s.headers["X-Screen-State"]) for s in patches] == [(LIST, "s0")]


async def test_timeout_with_the_current_screens_endpoint_sends_one_patch(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await client.handle_message(f"Timeout {LIST}")
        await settle(client)
        assert service.requests("PATCH") == [("PATCH", LIST)]


async def test_timeout_with_another_endpoint_polls_and_patches_both(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await client.open(REVIEW)
        await client.handle_message(f"Timeout {REVIEW}")
        await settle(client)
        assert sorted(service.requests("PATCH")) == [("PATCH", LIST), ("PATCH", REVIEW)]


async def test_an_empty_message_does_nothing(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        await client.handle_message("")
        await settle(client)
        assert service.requests("PATCH") == []
        assert scheduler.pending() == [30]


async def test_a_message_that_is_not_valid_is_ignored(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        await client.open(LIST)
        for text in (
            "timeout",
            "Timeout  /profile/appointments",
            "/elsewhere",
            "https://evil.test/profile/appointments",
        ):
            await client.handle_message(text)
        await settle(client)
        assert service.requests("PATCH") == []


async def test_a_failed_poll_is_reported_and_the_cycle_goes_on(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(LIST)
        changes = screen.changes()
        service.queue("PATCH", LIST, {"kind": "error", "code": "INTERNAL_ERROR", "message": "x", "status": 500}, 500)
        await scheduler.advance(30, client)
        change = await anext(changes)
        assert change.kind == "error" and change.error is not None and change.error.code == "INTERNAL_ERROR"
        assert scheduler.pending() == [60]


BUSY = {"kind": "error", "code": "SERVICE_BUSY", "message": "Busy.", "status": 503, "fields": {}}


async def test_a_busy_poll_is_sent_again_after_retry_after_and_one_busy_answer_shows_no_error(
    service, scheduler
) -> None:
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(LIST)
        seen: list[Any] = []
        screen.on_change(seen.append)
        service.queue("PATCH", LIST, BUSY, 503, {"Retry-After": "2"})
        await scheduler.advance(30, client)
        assert service.requests("PATCH") == [("PATCH", LIST)]
        assert scheduler.pending() == [32]  # the stated 2 s, not the page's 30 s
        assert seen == [] and screen.last_error is None
        await scheduler.advance(2, client)
        assert service.requests("PATCH") == [("PATCH", LIST)] * 2
        assert scheduler.pending() == [62]  # answered: back to the page's timeout


async def test_a_second_busy_answer_in_a_row_is_an_error_change(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(LIST)
        changes = screen.changes()
        service.queue("PATCH", LIST, BUSY, 503, {"Retry-After": "1"})
        service.queue("PATCH", LIST, BUSY, 503, {"Retry-After": "1"})
        await scheduler.advance(30, client)
        await scheduler.advance(1, client)
        change = await anext(changes)
        assert change.kind == "error" and change.error is not None and change.error.code == "SERVICE_BUSY"
        assert scheduler.pending() == [32]  # and it still comes back at the stated time


async def test_a_closed_screen_stops_polling(service, scheduler) -> None:
    async with await logged_in(service, scheduler) as client:
        screen = await client.open(LIST)
        await screen.close()
        assert scheduler.pending() == []
        await client.handle_message("Timeout")
        await settle(client)
        assert service.requests("PATCH") == []
