"""The real-time stream through the SDK against a real server: a change made by someone else reaches the screen
within a second with no help from polling (the list polls every 30 s here), logout and login reopen the stream,
and the stream comes back after the server restarts."""

from __future__ import annotations

import asyncio
import time

from doctordesk.client import Client
from tests.support.sdk_flows import approve_one_as, awaiting_decision, status_is


async def test_a_change_by_someone_else_reaches_the_screen_through_the_stream_within_a_second(stream_server) -> None:
    async with Client(stream_server.url) as doctor:
        await doctor.login("doctor1", "demo")
        screen = await doctor.open("/profile/appointments")
        assert screen.timeout >= 20  # polling cannot be what delivers the change below
        assert doctor.stream is not None
        await doctor.stream.wait_connected()
        appointment_id = await approve_one_as(stream_server.url, "doctor1", awaiting_decision(screen))
        started = time.monotonic()
        await screen.wait_for(status_is(appointment_id, "approved"), timeout=1.0)
        assert time.monotonic() - started < 1.0


async def test_logout_closes_the_stream_and_login_opens_a_new_one_with_the_new_token(stream_server) -> None:
    async with Client(stream_server.url) as client:
        await client.login("doctor1", "demo")
        first = client.stream
        assert first is not None
        await first.wait_connected()
        await client.logout()
        assert client.stream is None and not first.connected.is_set()
        await client.login("doctor2", "demo")
        second = client.stream
        assert second is not None and second is not first
        await second.wait_connected()
        screen = await client.open("/profile/appointments")
        appointment_id = await approve_one_as(stream_server.url, "doctor2", awaiting_decision(screen))
        await screen.wait_for(status_is(appointment_id, "approved"), timeout=1.0)


async def test_the_stream_reconnects_after_the_server_restarts(stream_server) -> None:
    async with Client(stream_server.url) as doctor:
        await doctor.login("doctor1", "demo")
        screen = await doctor.open("/profile/appointments")
        stream = doctor.stream
        assert stream is not None
        await stream.wait_connected()
        changes = screen.changes()
        stream_server.restart()
        # The new stream opens and the screen is announced again (a restarted service forgot it).
        async with asyncio.timeout(10):
            async for change in changes:
                if (change.kind, change.trigger) == ("page", "reload"):
                    break
        assert stream.connections == 2 and stream.connected.is_set()
        appointment_id = await approve_one_as(stream_server.url, "doctor1", awaiting_decision(screen))
        await screen.wait_for(status_is(appointment_id, "approved"), timeout=1.0)


async def test_a_token_revoked_elsewhere_ends_the_stream_without_retrying(stream_server) -> None:
    async with Client(stream_server.url) as web, Client(stream_server.url, realtime=False) as other:
        await web.login("doctor1", "demo")
        stream = web.stream
        assert stream is not None
        await stream.wait_connected()
        await other.use_token(web.token)
        await other.logout()  # the service closes the token's streams; the reconnect meets 401
        async with asyncio.timeout(3):
            while stream.stopped_by is None:
                await asyncio.sleep(0.05)
        assert stream.stopped_by.code == "UNAUTHORIZED" and not stream.connected.is_set()
        assert stream.connections == 1
