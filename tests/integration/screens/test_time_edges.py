"""A page holds until time alone changes it: per screen, the clock moved to just before the moment its state token
names leaves the poll unchanged (nothing rendered), and moved onto it brings exactly the patches that turn the old
page into a fresh render. Screens that no moment changes hold past the old one-minute age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from doctordesk.domain.scheduling.booking import VISIT_MINUTES
from doctordesk.screens.protocol import apply, walk
from doctordesk.store.fhir_tables import SlotHold
from doctordesk.store.tables import Appointment
from tests.support.review import PENDING_5, REQUESTED, aid

Json = dict[str, Any]


@pytest.fixture(autouse=True)
def _no_safety_net(request: pytest.FixtureRequest) -> None:
    """Edges lie hours apart: the max age (a safety net) would render the screens again before them."""
    if "runtime" in request.fixturenames:
        request.getfixturevalue("runtime").screens.max_age = 400 * 86400


def until(state: str) -> int:
    """The moment (unix seconds) the screen's own token names: 0 when none does."""
    inner = state.split("~", 1)[0].split("!", 1)[0]
    return int(inner.split(".")[5])


def section(page: Json, element_id: str) -> Json:
    found: Json = next(e for e in walk(page["elements"]) if e["id"] == element_id)
    return found


class Screen:
    """One viewer's page of one screen, polled and compared with fresh renders."""

    def __init__(self, client: httpx.AsyncClient, login: Any, username: str, path: str) -> None:
        self.client, self.login, self.username, self.path = client, login, username, path
        self.headers: dict[str, str] = {}
        self.page: Json = {}

    async def _send(self, method: str, path: str, **headers: str) -> Json:
        for _ in range(2):
            response = await self.client.request(method, path, headers={**self.headers, **headers})
            if response.status_code != 401:  # a jump of the clock may outlive the login: log in again
                break
            self.headers = (await self.login(self.username)).headers
        assert response.status_code == 200, response.text
        body: Json = response.json()
        return body

    async def open(self) -> Screen:
        self.headers = (await self.login(self.username)).headers
        self.page = await self._send("PUT", self.path)
        return self

    async def poll(self) -> Json:
        return await self._send("PATCH", self.page["poll"], **{"X-Screen-State": self.page["state"]})

    async def crossed(self, clock: Any) -> bool:
        """Move the clock to the page's edge (False when it has none): unchanged a second before, and there the
        poll's patches give the fresh page."""
        edge = until(self.page["state"])
        if edge == 0:
            return False
        clock.at = datetime.fromtimestamp(edge - 1, UTC)
        before = await self.poll()
        assert before["patches"] == [] and before["state"] == self.page["state"]
        clock.at = datetime.fromtimestamp(edge, UTC)
        update = await self.poll()
        fresh = await self._send("PUT", self.path)
        elements = apply(self.page["elements"], update["patches"])
        assert elements == fresh["elements"]
        self.page = {**self.page, "elements": elements, "state": update["state"]}
        return True


async def across(screen: Screen, clock: Any, edges: int) -> int:
    crossed = 0
    while crossed < edges and await screen.crossed(clock):
        crossed += 1
    return crossed


async def test_the_list_holds_until_a_row_starts_ends_or_its_day_turns(client, login, runtime, clock):
    screen = await Screen(client, login, "doctor1", "/profile/appointments").open()
    assert await across(screen, clock, 6) == 6


async def test_review_and_approve_holds_until_the_requested_time_passes(client, login, demo, runtime, clock):
    a = aid(demo, REQUESTED)
    async with runtime.db.read() as session:
        start = await session.scalar(select(Appointment.start_at).where(Appointment.id == a))
    clock.at = start - timedelta(seconds=30)
    screen = await Screen(client, login, "doctor1", f"/profile/appointments/{a}/approve").open()
    assert until(screen.page["state"]) == int(start.timestamp())
    assert "has passed" not in str(screen.page["elements"])
    assert await screen.crossed(clock)
    assert "The requested time has passed" in str(screen.page["elements"])
    assert await across(screen, clock, 2) == 2  # then its other moments (the day turns, the horizon)


async def test_booking_holds_until_a_free_time_reaches_the_lead_time_or_the_day_turns(client, login, runtime, clock):
    screen = await Screen(client, login, "patient1", "/profile/book").open()
    assert await across(screen, clock, 3) == 3


async def test_the_fees_screen_holds_until_a_recorded_version_comes_into_force(client, login, demo, runtime, clock):
    admin = await login("admin")
    rule = {"kind": "doctor_fee", "doctor_id": demo.users["doctor1"], "location_id": demo.locations["berlin"],
            "amount_cents": 9100, "effective_from": (clock.now() + timedelta(seconds=20)).isoformat()}  # fmt: skip
    assert (await client.post("/admin/fees", json=rule, headers=admin.headers)).status_code == 201
    screen = await Screen(client, login, "admin", "/profile/admin/fees").open()
    in_force = section(screen.page, "in-force")
    assert until(screen.page["state"]) == int((clock.now() + timedelta(seconds=20)).timestamp())
    assert await across(screen, clock, 1) == 1
    assert section(screen.page, "in-force") != in_force  # the new version is in force now
    # No later version: no moment changes it (a change of the fees is an event on the clinic topic).
    assert until(screen.page["state"]) == 0


async def test_screens_no_moment_changes_hold_until_an_event_or_the_safety_net(client, login, demo, runtime, clock):
    a = demo.appointments[0]
    screens = [
        await Screen(client, login, "doctor1", f"/profile/messages/user-chat?appointment-id={a}").open(),
        await Screen(client, login, "support1", "/profile/messages/threads").open(),
        await Screen(client, login, "admin", f"/profile/appointments/{aid(demo, PENDING_5)}/offers").open(),
    ]
    assert [until(s.page["state"]) for s in screens] == [0, 0, 0]
    clock.advance(timedelta(seconds=runtime.settings.screen_max_age_seconds - 1))  # far past the old minute
    for screen in screens:
        update = await screen.poll()
        assert update["patches"] == [] and update["state"] == screen.page["state"]
        fresh = await screen._send("PUT", screen.path)
        assert fresh["elements"] == screen.page["elements"]  # and a render would have shown the same


async def test_booking_holds_until_a_held_time_comes_free(client, login, demo, runtime, clock):
    """A FHIR ``$hold`` takes a time until it expires, without an event when it does: its expiry is an edge."""
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    path = f"/profile/book?doctor={doctor}&location={berlin}"
    first = await Screen(client, login, "patient1", path).open()
    times = [e for e in walk(first.page["elements"]) if e["id"].startswith("time-")]
    held = times[-1]  # the week's last free time: far from the lead time
    expires = clock.now().replace(microsecond=0) + timedelta(minutes=10)
    async with runtime.db.transaction() as session:
        session.add(
            SlotHold(
                doctor_id=doctor,
                location_id=berlin,
                start_at=datetime.fromisoformat(held["props"]["start"]),
                duration_minutes=VISIT_MINUTES,
                expires_at=expires,
                holder="account:1",
                created_at=clock.now(),
            )  # fmt: skip
        )
    screen = await Screen(client, login, "patient1", path).open()
    assert held["id"] not in str(screen.page["elements"])
    edges = []
    while held["id"] not in str(screen.page["elements"]):
        edges.append(until(screen.page["state"]))
        assert edges[-1] <= int(expires.timestamp())  # never past the expiry
        assert await screen.crossed(clock)
    assert edges[-1] == int(expires.timestamp())  # freed exactly at the hold's expiry, the poll equal to a render
