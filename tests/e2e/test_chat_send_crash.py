"""Chat sends survive the server being killed (SIGKILL) while they are under way: every send, retried with its
client message id until it is answered, is stored exactly once (none lost, none twice), and each thread's newest
message is the one written last. A real server on SQLite and on PostgreSQL, ten sends in flight, two chats shared
by a doctor and a support agent, the senders keeping their chat's state token as the web app does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import create_async_engine

from doctordesk.store.chat_tables import ChatMessage, ChatThread
from tests.support import databases
from tests.support.live import LiveServer

SENDS = 80
IN_FLIGHT = 10
KILL_AFTER = 25  # answered sends before the kill


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    env = {"DOCTORDESK_CHAT_SEND_PER_MINUTE": "0"}
    if request.param == "postgres":
        url = databases.postgres_url()
        asyncio.run(databases.truncate_postgres(url))
        env["DOCTORDESK_DATABASE_URL"] = url
    live = LiveServer(tmp_path / "live", extra_env=env)
    live.prepare()
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _database_url(server: LiveServer) -> str:
    return server.extra_env.get("DOCTORDESK_DATABASE_URL") or f"sqlite+aiosqlite:///{server.data_dir / 'doctordesk.db'}"


def _kill_and_start(server: LiveServer) -> None:
    assert server.process is not None
    server.process.kill()  # SIGKILL: no shutdown, no goodbye
    server.process.wait(10)
    server.process = None
    server.start()


async def _login(http: httpx.AsyncClient, username: str) -> dict[str, str]:
    answer = await http.post("/auth/login", data={"username": username, "password": "demo"})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}", "X-Client-Id": f"crash-{username}"}


async def test_sends_retried_across_a_kill_are_stored_once_each(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=5) as http:
        senders = [await _login(http, "doctor1"), await _login(http, "support1")]
        listed = await http.get("/api/appointments", headers=senders[0], params={"limit": 50})
        chats = [a["id"] for a in listed.json()["appointments"] if a["chat_enabled"]][:2]
        assert len(chats) == 2
        states: dict[tuple[int, int], str] = {}
        for s, headers in enumerate(senders):
            for a in chats:
                page = await http.put(f"/profile/messages/user-chat?appointment-id={a}", headers=headers)
                states[s, a] = page.json()["state"]
        answered = retried = 0
        killed = asyncio.Event()
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def send(i: int) -> None:
            nonlocal answered, retried
            s, a = i % 2, chats[(i // 2) % 2]
            async with slots:
                while True:
                    headers = {**senders[s], "X-Client-Message-Id": f"crash-{i}", "X-Screen-State": states[s, a]}
                    try:
                        answer = await http.post(
                            "/profile/messages/send-message",
                            data={"content": f"message {i}", "appointment-id": str(a)},
                            headers=headers,
                        )
                    except httpx.TransportError:  # the server is gone: try again (it comes back)
                        retried += 1
                        await asyncio.sleep(0.05)
                        continue
                    if answer.status_code >= 500:
                        await asyncio.sleep(0.05)
                        continue
                    assert answer.status_code == 200, answer.text
                    states[s, a] = answer.json()["state"]
                    answered += 1
                    return

        async def kill() -> None:
            while answered < KILL_AFTER:
                await asyncio.sleep(0.005)
            await asyncio.to_thread(_kill_and_start, server)
            killed.set()

        await asyncio.gather(kill(), *(send(i) for i in range(SENDS)))
        assert killed.is_set() and answered == SENDS
        assert retried >= IN_FLIGHT // 2  # the kill cut sends under way
    await _check_stored(_database_url(server))


async def _check_stored(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            counts: dict[str, Any] = dict(
                (
                    await conn.execute(
                        select(ChatMessage.client_message_id, func.count())
                        .where(ChatMessage.client_message_id.like("crash-%"))
                        .group_by(ChatMessage.client_message_id)
                    )
                ).all()
            )
            assert counts == {f"crash-{i}": 1 for i in range(SENDS)}  # none lost, none twice
            threads = (await conn.execute(select(ChatThread.id, ChatThread.last_message_id))).all()
            for thread_id, last in threads:
                newest = await conn.scalar(
                    select(ChatMessage.id)
                    .where(ChatMessage.thread_id == thread_id)
                    .order_by(ChatMessage.created_at.desc(), ChatMessage.id.desc())
                    .limit(1)
                )
                assert last == newest
    finally:
        await engine.dispose()
