"""Review and Approve through the SDK against a real server: approving from the list, suggesting an alternative,
and the errors a decision can meet."""

from __future__ import annotations

import pytest

from doctordesk.client import AppointmentChanged, Client, ElementDisabled, ValidationError


def decidable_rows(screen) -> list[int]:  # noqa: ANN001
    rows = screen.element("needs-decision").get("children", [])
    return [int(r["props"]["appointment"]) for r in rows if r["type"] == "Row"]


async def open_approvable(screen) -> int:  # noqa: ANN001
    """From the list, open Review and Approve (as the row's link does) on a request whose Approve is enabled."""
    for appointment_id in decidable_rows(screen):
        await screen.activate(f"review-{appointment_id}")
        assert screen.name == "review-and-approve"
        if screen.element("approve").get("enabled", True):
            return appointment_id
        await screen.navigate("/profile/appointments")
    raise AssertionError("no request can be approved")


async def test_approving_closes_the_screen_and_the_list_shows_the_new_status(own_server) -> None:
    async with Client(own_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        appointment_id = await open_approvable(screen)
        changes = screen.changes()
        await screen.activate("approve")
        assert screen.name == "appointment-list"
        assert screen.element(f"status-{appointment_id}")["props"]["status"] == "approved"
        assert appointment_id not in decidable_rows(screen)
        update = await anext(changes)
        assert (update.kind, update.navigate) == ("update", "/profile/appointments")
        assert (await anext(changes)).trigger == "navigate"


async def test_a_decided_appointment_cannot_be_decided_again(own_server) -> None:
    async with Client(own_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        appointment_id = await open_approvable(screen)
        await screen.activate("approve")
        await screen.navigate(f"/profile/appointments/{appointment_id}/approve")
        for action in ("approve", "decline", "another-alternative"):
            with pytest.raises(ElementDisabled):
                await screen.activate(action)


async def test_declining_without_a_reason_is_a_validation_error_on_the_reason(own_server) -> None:
    async with Client(own_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        appointment_id = await open_approvable(screen)
        await screen.activate("decline")
        assert screen.element("decline-modal").get("visible", True)
        with pytest.raises(ValidationError) as refused:
            await screen.activate("decline-submit")
        assert refused.value.status == 422 and "reason" in refused.value.fields
        await screen.fill("reason", "The doctor is away that week.")
        await screen.activate("decline-submit")
        assert screen.name == "appointment-list"
        assert screen.element(f"status-{appointment_id}")["props"]["status"] == "declined"


async def test_a_suggested_alternative_is_validated_as_it_is_typed(own_server) -> None:
    async with Client(own_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        await open_approvable(screen)
        await screen.activate("another-alternative")
        card = next(e for e in screen.walk() if e["id"].startswith("alternative-"))
        n = card["id"].split("-", 1)[1]
        await screen.fill(f"date~{n}", "2000-01-01")
        assert screen.element(f"alternative-{n}").get("error")  # incomplete: no time yet
        await screen.fill(f"time~{n}", "10:00")
        card = screen.element(f"alternative-{n}")
        assert screen.element(f"date~{n}").get("highlighted") is True  # changed from the request: red
        assert card.get("error") or any(e.get("error") for e in card["children"])  # in the past
        assert not screen.element("approve").get("enabled", True)


async def test_deciding_on_a_stale_page_asks_for_a_reload(stream_server) -> None:
    """Two tabs on the same request (polling every 20 s, no stream): the second decision meets APPOINTMENT_CHANGED
    with reload; after the reload the actions are disabled."""
    async with Client(stream_server.url, realtime=False) as tab1, Client(stream_server.url, realtime=False) as tab2:
        await tab1.login("doctor1", "demo")
        await tab2.use_token(tab1.token)
        first = await tab1.open("/profile/appointments")
        appointment_id = await open_approvable(first)
        second = await tab2.open(f"/profile/appointments/{appointment_id}/approve")
        await first.activate("approve")
        with pytest.raises(AppointmentChanged) as refused:
            await second.activate("approve")
        assert (refused.value.status, refused.value.reload) == (409, True)
        await second.reload()
        assert second.element("approve").get("enabled") is False
