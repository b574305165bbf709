"""The SSE parser and the discovery of the stream's path in the API description."""

from __future__ import annotations

from collections.abc import AsyncIterator

from doctordesk.client.stream import SseEvent, parse_sse, stream_path


async def events(text: str) -> list[SseEvent]:
    async def lines() -> AsyncIterator[str]:
        for line in text.split("\n"):
            yield line

    return [e async for e in parse_sse(lines())]


async def test_data_lines_join_and_a_blank_line_ends_the_event() -> None:
    assert await events("data: Timeout\ndata: more\nid: 7\n\n") == [SseEvent("Timeout\nmore", "message", "7")]


async def test_comments_are_heartbeats_and_dispatch_nothing() -> None:
    assert await events(": ping\n\n: ping\n\n") == []


async def test_an_empty_data_event_is_dispatched_with_empty_data() -> None:
    assert await events("data:\n\n") == [SseEvent("", "message")]


async def test_event_type_id_and_retry_are_read() -> None:
    parsed = await events("retry: 2500\n\nevent: heartbeat\ndata: x\nid: 3\n\ndata:/profile/appointments\n\n")
    assert parsed == [
        SseEvent("", "", None, 2500),
        SseEvent("x", "heartbeat", "3"),
        SseEvent("/profile/appointments", "message"),
    ]


async def test_an_unterminated_event_is_not_dispatched() -> None:
    assert await events("data: Timeout") == []


def test_the_stream_is_the_get_operation_answering_an_event_stream() -> None:
    api = {
        "paths": {
            "/profile/appointments": {"put": {"responses": {"200": {"content": {"application/json": {}}}}}},
            "/realtime/stream": {"get": {"responses": {"200": {"content": {"text/event-stream": {}}}}}},
        }
    }
    assert stream_path(api) == "/realtime/stream"
    assert stream_path({"paths": {}}) is None


async def test_the_reconnect_delay_follows_the_hint_and_grows_with_failures_in_a_row() -> None:
    from doctordesk.client import Client
    from doctordesk.client.stream import MAX_DELAY, RealtimeStream

    async with Client("http://service.test", realtime=False) as client:
        stream = RealtimeStream(client, reconnect_delay=1.0)
        assert stream.delay == 1.0
        stream.retry_seconds = 0.2
        delays = []
        for failures in range(1, 8):
            stream.failures = failures
            delays.append(stream.delay)
        assert delays[:3] == [0.2, 0.4, 0.8] and delays[-1] == MAX_DELAY
