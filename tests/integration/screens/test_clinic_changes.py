"""The clinic's reference data changed by the administration (a doctor renamed, a fee, work hours) is an event on
the clinic topic: the next poll of every open page showing that data renders it again at once (no minute's wait)
and brings exactly the patches a fresh render gives; a page that shows none of it is still answered from memory."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import update

from doctordesk.domain.events import CLINIC_TOPIC
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import apply
from doctordesk.store.tables import User
from tests.integration.screens.test_time_edges import Screen, until
from tests.integration.web.test_unchanged_polls import from_memory, opened
from tests.support.review import REQUESTED, aid


async def caught_up(screen: Screen) -> list[dict[str, Any]]:
    """Poll ``screen`` once: the poll renders (a new state) and its patches turn the old page into a fresh one."""
    update = await screen.poll()
    assert update["state"] != screen.page["state"], screen.path
    fresh = await screen._send("PUT", screen.path)
    elements = apply(screen.page["elements"], update["patches"])
    assert elements == fresh["elements"], screen.path
    patches: list[dict[str, Any]] = update["patches"]
    return patches


async def unchanged(screen: Screen) -> None:
    update = await screen.poll()
    assert update["patches"] == [] and update["state"] == screen.page["state"], screen.path


async def test_a_renamed_doctor_shows_at_the_next_poll_of_every_page_that_names_them(
    client: httpx.AsyncClient, login: Any, demo: Any, runtime: Runtime
) -> None:
    doctor, approve = demo.users["doctor1"], f"/profile/appointments/{aid(demo, REQUESTED)}/approve"
    screens = {
        "patient list": await Screen(client, login, "patient1", "/profile/appointments").open(),
        "booking": await Screen(client, login, "patient1", f"/profile/book?doctor={doctor}").open(),
        "fees": await Screen(client, login, "admin", "/profile/admin/fees").open(),
        "review": await Screen(client, login, "doctor1", approve).open(),
        "week": await Screen(client, login, "doctor1", "/profile/appointments/week").open(),
    }
    for screen in screens.values():
        await unchanged(screen)
    admin = await login("admin")
    renamed = await client.post(f"/admin/doctors/{doctor}", json={"display_name": "Dr. Renamed"}, headers=admin.headers)
    assert renamed.status_code == 200, renamed.text
    shows_the_name = []
    for name, screen in screens.items():
        if "Dr. Renamed" in str(await caught_up(screen)):
            shows_the_name.append(name)
    assert {"patient list", "booking", "fees"} <= set(shows_the_name)


async def test_a_fee_and_work_hours_change_show_at_the_next_poll_without_the_minute(
    client: httpx.AsyncClient, login: Any, demo: Any, runtime: Runtime, clock: Any
) -> None:
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    review = await Screen(client, login, "doctor1", f"/profile/appointments/{aid(demo, REQUESTED)}/approve").open()
    booking = await Screen(client, login, "patient1", f"/profile/book?doctor={doctor}&location={berlin}").open()
    fees = await Screen(client, login, "admin", "/profile/admin/fees").open()
    for screen in (review, booking, fees):  # no minute's cap: the next moment time alone changes them, if any
        assert until(screen.page["state"]) == 0 or until(screen.page["state"]) > clock.now().timestamp() + 60
    admin = await login("admin")
    rule = {"kind": "doctor_fee", "doctor_id": doctor, "location_id": berlin, "amount_cents": 12345}
    assert (await client.post("/admin/fees", json=rule, headers=admin.headers)).status_code == 201
    assert "123.45" in str(await caught_up(fees))
    await caught_up(review)  # it shows the clinic's fees (on its cards): rendered again
    await caught_up(booking)
    closed = {"rules": [], "confirm": True}
    response = await client.put(f"/admin/doctors/{doctor}/hours/{berlin}", json=closed, headers=admin.headers)
    assert response.status_code == 200, response.text
    assert await caught_up(booking) != []  # no work hours: no free times
    await caught_up(review)


async def test_another_process_s_clinic_event_drops_the_cached_reference_data(
    client: httpx.AsyncClient, login: Any, demo: Any, runtime: Runtime
) -> None:
    """The clinic's cache is kept with the topic's mark: an event from the bus (here: marked as the bus would, the
    change written by another process) is re-read by the next render, although the cache is young."""
    runtime.settings.reference_cache_seconds = 3600
    list_page = await Screen(client, login, "patient1", "/profile/appointments").open()
    booking = await Screen(client, login, "patient1", "/profile/book").open()
    async with runtime.db.transaction() as session:
        await session.execute(update(User).where(User.id == demo.users["doctor1"]).values(display_name="Dr. Elsewhere"))
    await unchanged(booking)  # no event yet: the page holds
    runtime.screens.revisions.bump((CLINIC_TOPIC,))
    assert "Dr. Elsewhere" in str(await caught_up(booking))
    assert "Dr. Elsewhere" in str(await caught_up(list_page))


async def test_a_page_without_reference_data_is_still_answered_from_memory(
    client: httpx.AsyncClient, login: Any, demo: Any, runtime: Runtime
) -> None:
    admin = await login("admin")
    poll = await opened(client, "/profile/admin/webhooks", {**admin.headers, "X-Client-Id": "tab-webhooks"})
    fees = await Screen(client, login, "admin", "/profile/admin/fees").open()
    renamed = await client.post(
        f"/admin/doctors/{demo.users['doctor2']}", json={"display_name": "Dr. Other"}, headers=admin.headers
    )
    assert renamed.status_code == 200, renamed.text
    before = from_memory(runtime)
    again = await client.patch("/profile/admin/webhooks", headers=poll)
    assert again.status_code == 200 and again.json()["patches"] == []
    assert from_memory(runtime) == before + 1
    assert "Dr. Other" in str(await caught_up(fees))
