"""Real changes through a real server reach each client's stream as the message its active screen can act on
(spec 6.1; the routing table of docs/realtime.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support.live import LiveServer, serving
from tests.support.sse import open_stream

QUIET = 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("routing"), DOCTORDESK_HEARTBEAT_SECONDS="0.5") as live:
        yield live


@pytest.fixture
async def http(server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


class User:
    def __init__(self, http: httpx.AsyncClient, token: str) -> None:
        self.http = http
        self.token = token

    def headers(self, client_id: str, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "X-Client-Id": client_id, **extra}

    async def put(self, path: str, client_id: str) -> dict[str, Any]:
        response = await self.http.put(path, headers=self.headers(client_id))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


async def login(http: httpx.AsyncClient, username: str) -> User:
    response = await http.post("/auth/login", data={"username": username, "password": "demo"})
    return User(http, response.json()["access_token"])


def walk(elements: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for e in elements:
        yield e
        yield from walk(e.get("children", []))


def requested_ids(page: dict[str, Any]) -> list[int]:
    return [
        int(e["id"].split("-", 1)[1])
        for e in walk(page["elements"])
        if e["id"].startswith("status-") and e.get("props", {}).get("code") == 1
    ]


async def approve_one(doctor: User, candidates: list[int], client_id: str) -> int:
    """Approve the first requested appointment that can be approved as proposed; its id."""
    for a in candidates:
        page = await doctor.put(f"/profile/appointments/{a}/approve", client_id)
        version = next(e for e in walk(page["elements"]) if e["id"] == "version")["value"]
        response = await doctor.http.post(
            f"/profile/appointments/{a}/approve", headers=doctor.headers(client_id), data={"version": version}
        )
        if response.status_code == 200:
            return a
    raise AssertionError("no approvable appointment in the demo")


async def test_a_decision_reaches_each_screen_that_shows_it_as_timeout_and_no_one_else(
    http: httpx.AsyncClient,
) -> None:
    doctor1, doctor2, support = (
        await login(http, "doctor1"),
        await login(http, "doctor2"),
        await login(http, "support1"),
    )
    list_page = await doctor1.put("/profile/appointments", "d1-list")
    candidates = requested_ids(list_page)
    await doctor2.put("/profile/appointments", "d2-list")
    await support.put("/profile/appointments", "s1-list")
    async with (
        open_stream(http, headers=doctor1.headers("d1-list")) as d1_list,
        open_stream(http, headers=doctor2.headers("d2-list")) as d2_list,
        open_stream(http, headers=support.headers("s1-list")) as s1_list,
    ):
        for s in (d1_list, d2_list, s1_list):
            await s.next()
        decided = await approve_one(doctor1, candidates, "d1-other-tab")
        assert (await d1_list.next_message()).data == "Timeout"
        assert (await s1_list.next_message()).data == "Timeout"
        assert await d2_list.quiet(QUIET) == []
        # Acting on it: the list's poll now brings the new status.
        update = (
            await http.patch(
                "/profile/appointments",
                headers=doctor1.headers("d1-list", **{"X-Screen-State": list_page["state"]}),
            )
        ).json()
        assert any(f"status-{decided}" in str(p) for p in update["patches"])


async def test_only_the_active_screen_counts(http: httpx.AsyncClient) -> None:
    doctor1 = await login(http, "doctor1")
    candidates = requested_ids(await doctor1.put("/profile/appointments", "moving"))
    target = candidates[-1]
    # The client leaves the list for the review screen of another appointment: list changes no longer concern it,
    # changes of the draft on its screen do.
    await doctor1.put(f"/profile/appointments/{target}/approve", "moving")
    async with open_stream(http, headers=doctor1.headers("moving")) as stream:
        await stream.next()
        response = await http.patch(
            f"/profile/appointments/{target}/approve/add-alternative", headers=doctor1.headers("other-tab")
        )
        assert response.status_code == 200, response.text
        assert (await stream.next_message()).data == "Timeout"
        await doctor1.put("/profile/appointments", "moving")
        await http.patch(
            f"/profile/appointments/{target}/approve/add-alternative", headers=doctor1.headers("other-tab")
        )
        assert await stream.quiet(QUIET) == []


async def test_a_reconnect_after_a_missed_change_starts_with_timeout(http: httpx.AsyncClient) -> None:
    doctor1 = await login(http, "doctor1")
    candidates = requested_ids(await doctor1.put("/profile/appointments", "recon"))
    async with open_stream(http, headers=doctor1.headers("recon")) as stream:
        last = await stream.next()
    await approve_one(doctor1, candidates, "recon-other")
    async with open_stream(http, headers=doctor1.headers("recon", **{"Last-Event-ID": last.id or ""})) as stream:
        assert (await stream.next()).data == "Timeout"


def appointment_ids(page: dict[str, Any]) -> list[int]:
    return [int(e["id"].split("-", 1)[1]) for e in walk(page["elements"]) if e["id"].startswith("status-")]


async def open_a_chat(doctor: User, support: User, client_ids: tuple[str, str]) -> int:
    """Both open the chat of one of the doctor's appointments that has chat enabled; its id."""
    for a in appointment_ids(await doctor.put("/profile/appointments", "chat-finder")):
        response = await doctor.http.put(
            "/profile/messages/user-chat", params={"appointment-id": a}, headers=doctor.headers(client_ids[0])
        )
        if response.status_code == 200:
            await support.put(f"/profile/messages/user-chat?appointment-id={a}", client_ids[1])
            return a
    raise AssertionError("no chat-enabled appointment in the demo")


async def send(user: User, appointment_id: int, text: str, client_id: str) -> None:
    response = await user.http.post(
        "/profile/messages/send-message",
        headers=user.headers(client_id),
        data={"content": text, "appointment-id": str(appointment_id)},
    )
    assert response.status_code == 200, response.text


async def test_a_chat_message_gives_each_screen_its_case_of_spec_6_1(http: httpx.AsyncClient) -> None:
    doctor, support, other_doctor = (
        await login(http, "doctor1"),
        await login(http, "support1"),
        await login(http, "doctor2"),
    )
    a = await open_a_chat(doctor, support, ("doc-chat", "sup-chat"))
    await doctor.put("/profile/appointments", "doc-list")
    await other_doctor.put("/profile/appointments", "doc2-list")
    async with (
        open_stream(http, headers=doctor.headers("doc-chat")) as doc_chat,
        open_stream(http, headers=support.headers("sup-chat")) as sup_chat,
        open_stream(http, headers=doctor.headers("doc-list")) as doc_list,
        open_stream(http, headers=other_doctor.headers("doc2-list")) as doc2_list,
    ):
        for s in (doc_chat, sup_chat, doc_list, doc2_list):
            assert (await s.next()).data == ""  # the empty message: heartbeat
        await send(doctor, a, "Could you check the referral?", "doc-chat")
        # The support agent's open chat: new content only → PATCH the chat's endpoint, timers untouched.
        assert (await sup_chat.next_message()).data == "/profile/messages/load-more"
        # The doctor's list: the unread indicator / thread state changed → Timeout.
        assert (await doc_list.next_message()).data == "Timeout"
        await send(support, a, "Done.", "sup-chat")
        # The doctor's open chat: new content and the doctor's own unread state → both.
        assert (await doc_chat.next_message()).data == "Timeout /profile/messages/load-more"
        assert await doc2_list.quiet(QUIET) == []
