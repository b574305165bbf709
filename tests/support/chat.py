"""Helpers for the chat tests: open the chat, send, count what is stored."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from doctordesk.runtime import Runtime
from doctordesk.store.chat_tables import Attachment, ChatMessage, ChatThread

SEND = "/profile/messages/send-message"
LOAD_MORE = "/profile/messages/load-more"


def chat_url(appointment_id: int) -> str:
    return f"/profile/messages/user-chat?appointment-id={appointment_id}"


async def open_chat(
    client: httpx.AsyncClient, who: Any, appointment_id: int, layout: str = "desktop"
) -> dict[str, Any]:
    response = await client.put(chat_url(appointment_id), headers={**who.headers, "X-Layout": layout})
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def send(
    client: httpx.AsyncClient,
    who: Any,
    appointment_id: int,
    content: str = "Hello",
    *,
    files: Any = None,
    state: str | None = None,
    headers: dict[str, str] | None = None,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    data = {"content": content, "appointment-id": str(appointment_id), **(extra or {})}
    h = {**who.headers, **(headers or {})}
    if state:
        h["X-Screen-State"] = state
    return await client.post(SEND, data=data, files=files, headers=h)


async def stored(runtime: Runtime) -> tuple[int, int, int]:
    """(threads, messages, attachments) created by the test (the demo's own are older than the test clock)."""
    from tests.conftest import NOW

    async with runtime.db.read() as session:
        counts = []
        for table in (ChatThread, ChatMessage, Attachment):
            query = select(func.count()).select_from(table).where(table.created_at >= NOW)
            counts.append(await session.scalar(query) or 0)
        return counts[0], counts[1], counts[2]


def walk(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in elements:
        out.append(e)
        out.extend(walk(e.get("children", [])))
    return out


def ids(elements: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for e in walk(elements)]


def messages(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in walk(elements) if e["type"] == "Group" and e["ref"].startswith(("incoming-", "outgoing-"))]
