"""Partner adapters: payload shapes and how answers map to sent / retry / invalid token (FCM is not reachable
here, so its answers come from an httpx transport that plays FCM)."""

from __future__ import annotations

import json

import httpx

from doctordesk.realtime.outbox import Due
from doctordesk.realtime.push import FCM_MAX_BYTES, FcmAdapter, GorushAdapter, is_invalid_token_error, retry_after
from doctordesk.workers.push_dispatcher import backoff


def due(n: int, *, platform: str = "android", token: str = "tok", text: str | None = "Hi") -> Due:
    return Due(n, f"id-{n}", n, platform, token, text, "Timeout", 1)


def test_gorush_payload_has_one_notification_per_token_with_string_data() -> None:
    adapter = GorushAdapter("http://partner")
    body = adapter.payload([due(1), due(2, platform="ios", text=None)])
    first, second = body["notifications"]
    assert first["tokens"] == ["tok"] and first["platform"] == 2 and first["message"] == "Hi"
    assert second["platform"] == 1 and second["apns_id"] == "id-2" and second["content_available"] is True
    assert all(isinstance(v, str) for n in body["notifications"] for v in n["data"].values())
    assert first["data"] == {"realtime": "Timeout", "notification_id": "id-1"}


def test_fcm_payload_stays_within_4_kb_by_shortening_the_text() -> None:
    body = FcmAdapter.payload(due(1, text="x" * 10_000))
    assert len(json.dumps(body).encode()) <= FCM_MAX_BYTES
    assert body["message"]["token"] == "tok"
    assert all(isinstance(v, str) for v in body["message"]["data"].values())


async def test_fcm_answers_map_to_sent_retry_and_invalid() -> None:
    def play(request: httpx.Request) -> httpx.Response:
        token = json.loads(request.content)["message"]["token"]
        if token == "gone":
            return httpx.Response(
                404, json={"error": {"status": "NOT_FOUND", "details": [{"errorCode": "UNREGISTERED"}]}}
            )
        if token == "busy":
            return httpx.Response(429, headers={"Retry-After": "7"})
        return httpx.Response(200, json={"name": "projects/p/messages/1"})

    adapter = FcmAdapter("https://fcm.example/v1/projects/p", credentials="secret")
    adapter.client = httpx.AsyncClient(transport=httpx.MockTransport(play))
    outcome = await adapter.send([due(1), due(2, token="gone"), due(3, token="busy")])
    await adapter.close()
    assert outcome.sent == [1]
    assert outcome.invalid == {2: (2, "gone")}
    assert outcome.retry[3][0] == 7.0


def test_retry_after_accepts_seconds_and_dates() -> None:
    assert retry_after(httpx.Response(503, headers={"Retry-After": "3"})) == 3.0
    assert retry_after(httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(httpx.Response(503)) is None


def test_invalid_token_words_of_the_partners_are_recognised() -> None:
    for text in ["Unregistered", "BadDeviceToken", "registration-token-not-registered", "UNREGISTERED"]:
        assert is_invalid_token_error(text)
    assert not is_invalid_token_error("InternalServerError")


def test_backoff_doubles_up_to_the_cap_and_honours_retry_after() -> None:
    assert 0.8 <= backoff(1, base=1, cap=100, asked=None) <= 1.2
    assert 6.4 <= backoff(4, base=1, cap=100, asked=None) <= 9.6
    assert backoff(30, base=1, cap=100, asked=None) <= 120
    assert backoff(1, base=1, cap=100, asked=50) == 50
