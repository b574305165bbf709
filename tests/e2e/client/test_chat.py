"""Chat through the SDK against a real server: a doctor and a support agent each see the other's message within
a second (the chat polls every 30 s here: the stream carries it), with an attachment, and the refusals."""

from __future__ import annotations

import io
import struct
import time
import zlib

import pytest
from PIL import Image

from doctordesk.client import ChatDisabled, Client, ElementDisabled, FileUpload, Screen


def png() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0")) + chunk(b"IEND", b"")
    )


def chat(appointment_id: int) -> str:
    return f"/profile/messages/user-chat?appointment-id={appointment_id}"


async def chat_appointment(client: Client, *, enabled: bool) -> int:
    """One of the logged-in doctor's appointments with chat enabled (or disabled)."""
    body = await client.request("GET", "/api/appointments")
    return next(a["id"] for a in body["appointments"] if a["chat_enabled"] is enabled)


def message_with(screen: Screen, direction: str, text: str) -> dict | None:
    return next(
        (e for e in screen.walk() if e["id"].startswith(f"{direction}-") and e.get("value") == text),
        None,
    )


async def test_a_doctor_and_a_support_agent_see_each_others_messages_within_a_second(stream_server) -> None:
    async with Client(stream_server.url) as doctor, Client(stream_server.url) as agent:
        await doctor.login("doctor1", "demo")
        await agent.login("support1", "demo")
        appointment_id = await chat_appointment(doctor, enabled=True)
        doctor_chat = await doctor.open(chat(appointment_id))
        agent_chat = await agent.open(chat(appointment_id))
        assert doctor_chat.timeout >= 20
        assert doctor.stream is not None and agent.stream is not None
        await doctor.stream.wait_connected()
        await agent.stream.wait_connected()

        doctor_chat.set_value("content", "Can the patient bring the referral?")
        await doctor_chat.activate("send")
        assert message_with(doctor_chat, "outgoing", "Can the patient bring the referral?")
        assert not doctor_chat.value("content")  # the input is cleared
        started = time.monotonic()
        await agent_chat.wait_for(
            lambda s: message_with(s, "incoming", "Can the patient bring the referral?") is not None, timeout=1.0
        )

        agent_chat.set_value("content", "Yes, as a PDF or a photo.")
        await agent_chat.activate("send")
        await doctor_chat.wait_for(
            lambda s: message_with(s, "incoming", "Yes, as a PDF or a photo.") is not None, timeout=1.0
        )
        assert time.monotonic() - started < 2.0


async def test_an_attachment_is_sent_and_can_be_downloaded_by_the_other_side(stream_server) -> None:
    async with Client(stream_server.url) as doctor, Client(stream_server.url) as agent:
        await doctor.login("doctor1", "demo")
        await agent.login("support1", "demo")
        appointment_id = await chat_appointment(doctor, enabled=True)
        doctor_chat = await doctor.open(chat(appointment_id))
        agent_chat = await agent.open(chat(appointment_id))
        assert agent.stream is not None
        await agent.stream.wait_connected()
        image = png()
        doctor_chat.set_value("content", "The rash, photographed today.")
        doctor_chat.set_value("file", FileUpload("rash.png", image, "image/png"))
        await doctor_chat.activate("send")
        await agent_chat.wait_for(
            lambda s: message_with(s, "incoming", "The rash, photographed today.") is not None, timeout=1.0
        )
        received = message_with(agent_chat, "incoming", "The rash, photographed today.")
        assert received is not None
        (viewer,) = [c for c in received.get("children", []) if c["type"] == "Attachment"]
        assert viewer["value"] == "rash.png"
        content, mime = await agent.download(viewer["props"]["href"])
        # Stored re-encoded (metadata and anything else stripped): the same picture, not the same bytes.
        assert mime == "image/png"
        assert Image.open(io.BytesIO(content)).tobytes() == Image.open(io.BytesIO(image)).tobytes()


async def test_an_empty_message_is_not_sent_and_a_disabled_chat_refuses_messages(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as doctor:
        await doctor.login("doctor1", "demo")
        screen = await doctor.open(chat(await chat_appointment(doctor, enabled=True)))
        with pytest.raises(ElementDisabled):
            await screen.activate("send")
        blocked = await doctor.open(chat(await chat_appointment(doctor, enabled=False)))
        assert blocked.find("chat-blocked") is not None
        blocked.set_value("content", "Hello?")
        with pytest.raises(ElementDisabled):
            await blocked.activate("send")
        with pytest.raises(ChatDisabled) as refused:
            await blocked.activate("send", force=True)
        assert refused.value.code == "DOCTOR_COMMUNITY_CHAT_DISABLED" and refused.value.status == 403


def incoming_ids(screen: Screen) -> list[int]:
    return [int(e["id"].split("-", 1)[1]) for e in screen.walk() if e["id"].startswith("incoming-")]


async def test_load_more_prepends_the_older_messages_in_order(own_server) -> None:
    async with Client(own_server.url, realtime=False) as doctor, Client(own_server.url, realtime=False) as agent:
        await doctor.login("doctor1", "demo")
        await agent.login("support1", "demo")
        appointment_id = await chat_appointment(doctor, enabled=True)
        agent_chat = await agent.open(chat(appointment_id))
        for i in range(35):
            agent_chat.set_value("content", f"note {i}")
            await agent_chat.activate("send")
        screen = await doctor.open(chat(appointment_id))
        shown = incoming_ids(screen)
        assert len(shown) < 35 and screen.find("load-more") is not None
        changes = screen.changes()
        await screen.activate("load-more")
        change = await anext(changes)
        assert change.kind == "update" and any(p["op"] == "prepend" for p in change.patches)
        everything = incoming_ids(screen)
        assert len(everything) == 35 and everything == sorted(everything) and everything[-len(shown) :] == shown
