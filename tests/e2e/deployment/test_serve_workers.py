"""``doctordesk serve --workers 2`` on the embedded default (SQLite, no Redis): the workers share one event bus and
one screen state (realtime/broker.py), so a stream hears of every change whichever worker made it, and each
worker answers the other's state tokens from memory."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from doctordesk.cli import app
from doctordesk.screens.protocol import apply
from tests.e2e.deployment.processes import Served, clients_per_process, metric
from tests.e2e.realtime.test_routing_live import User, login, open_a_chat, send
from tests.support.sse import open_stream

LIST = "/profile/appointments"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("workers"), extra_env={"DOCTORDESK_HEARTBEAT_SECONDS": "0.5"})
    server.extra_env.pop("DOCTORDESK_DATABASE_URL", None)
    server.prepare()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def workers(served: Served) -> AsyncIterator[list[list[httpx.AsyncClient]]]:
    """Two clients held to each worker: one for requests, one for a stream."""
    async with clients_per_process(served.url, 2) as clients:
        yield clients


async def test_both_workers_share_the_bus_on_this_host(workers: list[list[httpx.AsyncClient]]) -> None:
    for client, _ in workers:
        assert (await client.get("/readyz")).json()["bus"] == "socket-connected"


async def test_a_stream_hears_of_all_ten_messages_whichever_worker_took_them(
    workers: list[list[httpx.AsyncClient]],
) -> None:
    (one, one_streams), (two, two_streams) = workers
    doctor = await login(one, "doctor1")
    support = await login(one, "support1")
    a = await open_a_chat(doctor, support, ("w-doc-chat", "w-sup-chat"))
    # The doctor's chat is open through worker one, the doctor's list through worker two; each has its stream there.
    await User(two, doctor.token).put(LIST, "w-doc-list")
    through = [support, User(two, support.token)]
    async with (
        open_stream(one_streams, headers=doctor.headers("w-doc-chat")) as chat,
        open_stream(two_streams, headers=doctor.headers("w-doc-list")) as listing,
    ):
        assert (await chat.next()).data == "" and (await listing.next()).data == ""
        for n in range(10):
            await send(through[n % 2], a, f"message {n}", "w-sup-chat")
            assert (await chat.next_message()).data == "Timeout /profile/messages/load-more", n
            assert (await listing.next_message()).data == "Timeout", n


async def test_each_worker_answers_the_others_unchanged_polls_from_memory(
    workers: list[list[httpx.AsyncClient]],
) -> None:
    one, two = (clients[0] for clients in workers)
    doctor = await login(one, "doctor2")
    for issuer, answerer in ((one, two), (two, one)):
        page = await User(issuer, doctor.token).put(LIST, "w-poll")
        poll = {**doctor.headers("w-poll"), "X-Screen-State": page["state"]}
        first = await answerer.patch(LIST, headers=poll)
        # Not a reset: the other worker judged the token current and knew the page it names.
        assert first.status_code == 200 and first.json()["patches"] == [], first.text
        before = metric((await answerer.get("/metrics")).text, "doctordesk_polls_from_memory")
        again = await answerer.patch(LIST, headers=poll)
        assert again.json()["patches"] == []
        assert metric((await answerer.get("/metrics")).text, "doctordesk_polls_from_memory") == before + 1


def test_serve_refuses_several_workers_when_they_could_share_no_bus(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    result = CliRunner().invoke(app, ["serve", "--workers", "2"], env={"DOCTORDESK_DATA_DIR": str(deep)})
    assert result.exit_code == 2
    assert "several workers need a shared event bus" in result.output
    assert "DOCTORDESK_REDIS_URL" in result.output


async def test_a_send_through_the_other_worker_builds_on_the_page_the_first_made(
    workers: list[list[httpx.AsyncClient]],
) -> None:
    (one, _), (two, _) = workers
    doctor = await login(one, "doctor3")
    support = await login(one, "support2")
    a = await open_a_chat(doctor, support, ("w-append-chat", "w-append-sup"))
    chat = f"/profile/messages/user-chat?appointment-id={a}"
    # Opened again once everything is read: no "new messages" marker, as in a fresh render after the send.
    page = await User(one, doctor.token).put(chat, "w-append-chat")
    before = _counts((await two.get("/metrics")).text)
    response = await two.post(
        "/profile/messages/send-message",
        headers={**doctor.headers("w-append-chat"), "X-Screen-State": page["state"]},
        data={"content": "through the other worker", "appointment-id": str(a)},
    )
    assert response.status_code == 200, response.text
    after = _counts((await two.get("/metrics")).text)
    # Worker two never saw the page: it took it from the bus and appended, without rendering the chat.
    assert after["from_bus"] == before["from_bus"] + 1
    assert after["appended"] == before["appended"] + 1 and after["rendered"] == before["rendered"]
    answer = response.json()
    assert not [p for p in answer["patches"] if p["op"] == "reset"]
    shown = apply(page["elements"], answer["patches"])
    fresh = await User(one, doctor.token).put(chat, "w-append-fresh")
    assert shown == fresh["elements"]
    assert "through the other worker" in str(shown)


async def test_a_send_is_handled_on_the_other_worker_only_once_a_stream_there_shows_its_chat(
    workers: list[list[httpx.AsyncClient]],
) -> None:
    (one, _), (two, two_streams) = workers
    doctor = await login(one, "doctor2")
    support = await login(one, "support1")
    a = await open_a_chat(doctor, support, ("w-only-doc", "w-only-sup"))
    before = await _events(two)
    await send(support, a, "nobody on worker two shows this chat", "w-only-sup")
    # Worker two marks the send (its screen state moves on) but has nothing to do with its events.
    after = await _events(two, until=lambda got: got["marked_only"] > before["marked_only"])
    assert after == {"received": before["received"], "marked_only": before["marked_only"] + 1}
    async with open_stream(two_streams, headers=doctor.headers("w-only-doc")) as chat:
        assert (await chat.next()).data == ""
        await send(support, a, "the doctor's stream is on worker two now", "w-only-sup")
        assert (await chat.next_message()).data.endswith("/profile/messages/load-more")
    handled = await _events(two, until=lambda got: got["received"] > after["received"])
    assert handled == {"received": after["received"] + 1, "marked_only": after["marked_only"]}


async def _events(
    client: httpx.AsyncClient, *, until: Callable[[dict[str, float]], bool] = lambda _got: True
) -> dict[str, float]:
    """The events of other workers a worker handled and those it only marked (its /metrics), once ``until`` holds
    (the batch reaches it a moment after the sender's answer)."""
    async with asyncio.timeout(10):
        while True:
            text = (await client.get("/metrics")).text
            got = {
                "received": metric(text, "doctordesk_events_received"),
                "marked_only": metric(text, "doctordesk_events_marked_only"),
            }
            if until(got):
                return got
            await asyncio.sleep(0.05)


def _counts(exposition: str) -> dict[str, float]:
    """The chat pages a worker took from the bus and its answers to sends, by how (its /metrics)."""
    answers = dict(re.findall(r'^doctordesk_chat_send_answers_total\{how="(\w+)"\} (\S+)$', exposition, re.M))
    return {
        "from_bus": metric(exposition, "doctordesk_chat_pages_from_bus"),
        "appended": float(answers.get("appended", 0)),
        "rendered": float(answers.get("rendered", 0)),
    }
