"""A screen applies update sets with the protocol's own ``apply``, follows navigate/reload/notice, and sends the
values of its inputs with an action (pure client logic against a scripted service)."""

from __future__ import annotations

from typing import Any

import pytest

from doctordesk.client import Client, ElementDisabled, FileUpload, User
from doctordesk.screens.protocol import p_append, p_remove, p_update
from tests.support.fake_service import FakeScheduler, FakeService, fake_client, page, update

REVIEW = "/profile/appointments/7/approve"
LIST = "/profile/appointments"


def review_elements() -> list[dict[str, Any]]:
    return [
        {
            "id": "alternative-1",
            "ref": "alternative-1",
            "type": "Card",
            "children": [
                {"id": "date~1", "ref": "date~1", "type": "Date", "name": "date~1", "value": "2026-11-25"},
                {"id": "time~1", "ref": "time~1", "type": "Time", "name": "time~1"},
                {
                    "id": "location~1",
                    "ref": "location~1",
                    "type": "Combo",
                    "name": "location~1",
                    "value": "2",
                    "enabled": False,
                },
            ],
        },
        {"id": "disclaimer", "ref": "disclaimer", "type": "Checkbox", "name": "disclaimer-displayed", "value": False},
        {
            "id": "approve",
            "ref": "approve",
            "type": "Button",
            "action": {"method": "POST", "endpoint": REVIEW, "form": "alternative-1"},
        },
        {
            "id": "decline",
            "ref": "decline",
            "type": "Button",
            "enabled": False,
            "action": {"method": "POST", "endpoint": "/x/decline", "confirm": "Decline?"},
        },
        {"id": "back", "ref": "back", "type": "Link", "action": {"method": "PUT", "endpoint": LIST}},
        {"id": "upload", "ref": "upload", "type": "Upload", "name": "file"},
        {
            "id": "send",
            "ref": "send",
            "type": "Link",
            "action": {"method": "POST", "endpoint": "/send", "confirm": "Send it?"},
        },
    ]


@pytest.fixture
def service() -> FakeService:
    s = FakeService()
    s.pages[REVIEW] = page("review-and-approve", REVIEW, review_elements(), timeout=20)
    s.pages[LIST] = page("appointment-list", LIST, [{"id": "title", "ref": "title", "type": "Heading"}])
    return s


async def client_for(service: FakeService) -> Client:
    client = fake_client(service, FakeScheduler())
    await client.use_token("token", User(1, "doctor1", "doctor", "Dr. Anna Berger"))
    return client


async def test_every_call_carries_the_token_client_id_layout_and_state(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        await screen.poll()
        put, patch = service.seen
        assert put.headers["Authorization"] == "Bearer token"
        assert put.headers["X-Client-Id"] == client.client_id == patch.headers["X-Client-Id"]
        assert put.headers["X-Layout"] == "desktop"
        assert "X-Screen-State" not in put.headers
        assert patch.headers["X-Screen-State"] == "s0"


async def test_update_sets_are_applied_in_order_and_the_state_replaced(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        patches = [
            p_update("approve", enabled=False),
            p_append([{"id": "alternative-2", "ref": "alternative-2", "type": "Card"}], parent=None),
            p_remove("upload"),
        ]
        service.queue("PATCH", REVIEW, update("review-and-approve", patches, state="s9", timeout=7))
        change = await screen.poll()
        assert change is not None and change.kind == "update" and list(change.patches) == patches
        assert screen.element("approve")["enabled"] is False
        assert screen.elements[-1]["id"] == "alternative-2"
        assert screen.find("upload") is None
        assert (screen.state, screen.timeout) == ("s9", 7)


async def test_an_empty_update_set_is_no_change(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        assert await screen.poll() is None


async def test_patches_that_do_not_fit_the_page_make_it_reload(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        service.queue("PATCH", REVIEW, update("review-and-approve", [p_remove("no-such-element")]))
        change = await screen.poll()
        assert change is not None and (change.kind, change.trigger) == ("page", "reload")
        assert service.requests()[-1] == ("PUT", REVIEW)


async def test_navigate_closes_the_screen_and_shows_the_named_one(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        changes = screen.changes()
        notice = {"level": "info", "text": "Appointment approved."}
        service.queue("POST", REVIEW, update("review-and-approve", navigate=LIST, notice=notice))
        screen.set_value("time~1", "10:30")
        await screen.activate("approve")
        first, second = await anext(changes), await anext(changes)
        assert (first.kind, first.navigate, first.notice) == ("update", LIST, notice)
        assert (second.kind, second.trigger) == ("page", "navigate")
        assert (screen.name, screen.endpoint) == ("appointment-list", LIST)
        assert screen.notices == [notice]


async def test_reload_puts_the_current_screen_again(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        service.queue("PATCH", REVIEW, update("review-and-approve", reload=True))
        await screen.poll()
        assert service.requests()[-1] == ("PUT", REVIEW)


async def test_an_action_sends_the_enabled_named_inputs_of_its_form(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        screen.set_value("time~1", "10:30")
        screen.set_value("disclaimer-displayed", True)  # outside the form: not sent
        service.queue("POST", REVIEW, update("review-and-approve"))
        await screen.activate("approve")
        post = service.seen[-1]
        assert post.method == "POST" and post.headers["X-Screen-State"] == "s0"
        assert post.form == {"date~1": ["2026-11-25"], "time~1": ["10:30"]}


async def test_an_action_without_a_form_sends_the_whole_page_and_files_as_multipart(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        screen.set_value("file", FileUpload("scan.pdf", b"%PDF-1.4", "application/pdf"))
        service.queue("POST", "/send", update("review-and-approve"))
        await screen.activate("send")
        post = service.seen[-1]
        assert post.headers["content-type"].startswith("multipart/form-data")
        assert b'name="file"; filename="scan.pdf"' in post.body and b"%PDF-1.4" in post.body
        assert b'name="disclaimer-displayed"\r\n\r\nfalse' in post.body
        assert b"location~1" not in post.body  # disabled
        assert screen.form_values() == {"date~1": "2026-11-25", "time~1": "", "disclaimer-displayed": "false"}


async def test_a_refused_confirmation_sends_nothing(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        asked: list[str] = []
        assert await screen.activate("send", confirm=lambda q: asked.append(q) or False) is None
        assert asked == ["Send it?"] and service.requests("POST") == []


async def test_a_disabled_element_cannot_be_activated(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        with pytest.raises(ElementDisabled):
            await screen.activate("decline")
        with pytest.raises(ElementDisabled):
            await screen.activate("date~1")  # no action
        assert service.requests("POST") == []


async def test_a_put_action_replaces_the_page(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        change = await screen.activate("back")
        assert change is not None and change.kind == "page" and screen.name == "appointment-list"


async def test_a_value_patched_by_the_service_replaces_the_typed_one(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        screen.set_value("time~1", "10:30")
        service.queue("PATCH", REVIEW, update("review-and-approve", [p_update("time~1", value=None)]))
        await screen.poll()
        assert screen.value("time~1") is None


async def test_callbacks_and_iterators_see_every_change(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        seen: list[str] = []
        unsubscribe = screen.on_change(lambda change: seen.append(change.kind))
        iterator = screen.changes()
        service.queue("PATCH", REVIEW, update("review-and-approve", [p_update("approve", label="Go")]))
        await screen.poll()
        unsubscribe()
        await screen.close()
        assert seen == ["update"]
        assert [c.kind async for c in iterator] == ["update", "closed"]


async def test_wait_for_returns_once_the_condition_holds(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        service.queue("PATCH", REVIEW, update("review-and-approve", [p_update("approve", label="Go")]))
        import asyncio

        waiter = asyncio.create_task(screen.wait_for(lambda s: s.element("approve").get("label") == "Go", timeout=2))
        await asyncio.sleep(0)
        await screen.poll()
        await waiter
        with pytest.raises(TimeoutError):
            await screen.wait_for(lambda s: False, timeout=0.05)


async def test_fill_performs_the_inputs_own_action_as_a_change_event_would(service) -> None:
    service.pages[REVIEW]["elements"][0]["children"][1]["action"] = {
        "method": "PATCH",
        "endpoint": REVIEW + "/change",
        "form": "alternative-1",
    }
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        service.queue("PATCH", REVIEW + "/change", update("review-and-approve", [p_update("time~1", highlighted=True)]))
        change = await screen.fill("time~1", "11:00")
        assert change is not None and screen.element("time~1")["highlighted"] is True
        assert service.seen[-1].form == {"date~1": ["2026-11-25"], "time~1": ["11:00"]}
        assert await screen.fill("date~1", "2026-11-26") is None  # no action of its own: only set


async def test_reannouncing_puts_the_screen_again_and_keeps_what_was_typed(service) -> None:
    async with await client_for(service) as client:
        screen = await client.open(REVIEW)
        screen.set_value("time~1", "10:30")
        screen.set_value("file", FileUpload("a.pdf", b"%PDF", "application/pdf"))
        await client.reannounce()
        assert service.requests()[-1] == ("PUT", REVIEW)
        assert screen.value("time~1") == "10:30" and screen.value("file") == "a.pdf"
        assert screen.value("date~1") == "2026-11-25"


async def test_a_push_registration_is_sent_on_every_call(service) -> None:
    from doctordesk.client import PushRegistration

    client = fake_client(service, FakeScheduler(), push=PushRegistration("tok-1", "ios", "dev-9"))
    async with client:
        await client.use_token("token", User(1, "doctor1", "doctor", "Dr. Anna Berger"))
        screen = await client.open(REVIEW)
        client.set_push(PushRegistration("tok-2", "ios", "dev-9"))
        await screen.poll()
        put, patch = service.seen
        assert (put.headers["X-Push-Token"], put.headers["X-Push-Platform"], put.headers["X-Device-Id"]) == (
            "tok-1",
            "ios",
            "dev-9",
        )
        assert patch.headers["X-Push-Token"] == "tok-2"


async def test_send_with_neither_text_nor_file_sends_nothing(service) -> None:
    service.pages[LIST]["elements"] = [
        {"id": "content", "ref": "content", "type": "Edit", "name": "content", "value": ""},
        {"id": "upload", "ref": "upload", "type": "Upload", "name": "file"},
        {
            "id": "send",
            "ref": "send",
            "type": "Link",
            "props": {"requires_one_of": ["content", "file"]},
            "action": {"method": "POST", "endpoint": "/send"},
        },
    ]
    async with await client_for(service) as client:
        screen = await client.open(LIST)
        screen.set_value("content", "   ")
        with pytest.raises(ElementDisabled):
            await screen.activate("send")
        assert service.requests("POST") == []
        screen.set_value("file", FileUpload("a.png", b"\x89PNG", "image/png"))
        service.queue("POST", "/send", update("appointment-list"))
        await screen.activate("send")
        assert service.requests("POST") == [("POST", "/send")]


def test_a_mobile_client_is_named_by_its_device_id() -> None:
    from doctordesk.client import PushRegistration
    from doctordesk.client.session import default_client_id

    assert default_client_id(PushRegistration("t", "android", "pixel-8_a1")) == "pixel-8_a1"
    assert default_client_id(PushRegistration("t", "android", "not a client id")).startswith("sdk-")
    assert default_client_id(None).startswith("sdk-")
