"""A real server restarts (no Redis: it forgets every client's screen): a client that only polls, without
PUTting its screen again, gets its real-time messages again from its next poll on."""

from __future__ import annotations

import asyncio

import httpx

from tests.e2e.realtime.test_routing_live import login, open_a_chat, send
from tests.support.live import LiveServer
from tests.support.sse import open_stream

QUIET = 1.0


async def test_after_a_restart_a_poll_alone_brings_the_clients_messages_back(live_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=10) as http:
        doctor, support = await login(http, "doctor1"), await login(http, "support1")
        a = await open_a_chat(doctor, support, ("doctor-tab", "support-tab"))
        page = await doctor.put(f"/profile/messages/user-chat?appointment-id={a}", "doctor-tab")

        await asyncio.to_thread(live_server.restart)

        async with open_stream(http, headers=doctor.headers("doctor-tab")) as stream:
            assert (await stream.next()).data == ""
            # The restarted server does not know the doctor's screen: a new message reaches no one.
            await send(support, a, "Are you there?", "support-tab")
            assert await stream.quiet(QUIET) == []
            # The doctor's chat polls, as it does every few seconds (no PUT).
            poll = await http.patch(
                "/profile/messages/load-more", headers=doctor.headers("doctor-tab", **{"X-Screen-State": page["state"]})
            )
            assert poll.status_code == 200, poll.text
            await send(support, a, "Here is the referral.", "support-tab")
            # The message for the open chat: new content (its poll endpoint) and its unread state (Timeout).
            assert (await stream.next_message(timeout=3)).data == "Timeout /profile/messages/load-more"
