"""Push partner adapters: the Gorush gateway contract (default) and FCM HTTP v1.

A notification is an optional user-visible text and a custom data string (a real-time message). Both adapters
carry the data string as ``data.realtime`` and the notification id as ``data.notification_id`` (string values);
Gorush also gets it as ``apns_id`` for iOS, so APNs itself can drop a duplicate.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from doctordesk.realtime.outbox import Due

PLATFORMS = {"ios": 1, "android": 2}
FCM_MAX_BYTES = 4096
# Words partners use for a token that will never work again (FCM, APNs, Gorush logs).
INVALID_TOKEN_MARKERS = (
    "unregistered",
    "not-registered",
    "notregistered",
    "baddevicetoken",
    "invalid-registration",
    "invalidregistration",
    "devicetokennotfortopic",
    "invalid token",
)


@dataclass
class Outcome:
    """What happened to each row of a batch (row ids)."""

    sent: list[int] = field(default_factory=list)
    retry: dict[int, tuple[float | None, str]] = field(default_factory=dict)  # delay asked by the partner, error
    dropped: dict[int, str] = field(default_factory=dict)
    invalid: dict[int, tuple[int, str]] = field(default_factory=dict)  # row → (device id, token)

    def retry_all(self, batch: Sequence[Due], delay: float | None, error: str) -> Outcome:
        for due in batch:
            self.retry[due.id] = (delay, error)
        return self


class PushAdapter(Protocol):
    batch_size: int

    async def send(self, batch: Sequence[Due]) -> Outcome: ...

    async def close(self) -> None: ...


class Answer(Protocol):
    """An HTTP answer of any client (httpx for push partners, aiohttp for webhooks): its headers."""

    @property
    def headers(self) -> Mapping[str, str]: ...


def retry_after(response: Answer) -> float | None:
    """Seconds the partner asked us to wait (``Retry-After``: seconds or an HTTP date)."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def is_invalid_token_error(text: str) -> bool:
    lowered = text.lower().replace("_", "-")
    return any(marker in lowered or marker.replace("-", "") in lowered for marker in INVALID_TOKEN_MARKERS)


def _data(due: Due) -> dict[str, str]:
    return {"realtime": due.data, "notification_id": due.notification_id}


class GorushAdapter:
    """``POST {url}/api/push`` with ``notifications[]`` (one per notification, batched per request)."""

    batch_size = 500

    def __init__(self, url: str, *, credentials: str = "", timeout: float = 10.0) -> None:
        headers = {"Authorization": f"Bearer {credentials}"} if credentials else {}
        self.endpoint = url.rstrip("/") + "/api/push"
        self.client = httpx.AsyncClient(timeout=timeout, headers=headers)

    def payload(self, batch: Sequence[Due]) -> dict[str, Any]:
        notifications = []
        for due in batch:
            item: dict[str, Any] = {
                "tokens": [due.token],
                "platform": PLATFORMS[due.platform],
                "message": due.text or "",
                "data": _data(due),
            }
            if due.platform == "ios":
                item["apns_id"] = due.notification_id
                if not due.text:
                    item["content_available"] = True
            else:
                item["priority"] = "high"
            notifications.append(item)
        return {"notifications": notifications}

    async def send(self, batch: Sequence[Due]) -> Outcome:
        outcome = Outcome()
        try:
            response = await self.client.post(self.endpoint, json=self.payload(batch))
        except httpx.HTTPError as exc:
            return outcome.retry_all(batch, None, f"{type(exc).__name__}: {exc}")
        if response.status_code == 429 or response.status_code >= 500:
            return outcome.retry_all(batch, retry_after(response), f"HTTP {response.status_code}")
        if response.status_code >= 400:
            for due in batch:
                outcome.dropped[due.id] = f"HTTP {response.status_code}: {response.text[:200]}"
            return outcome
        failed: dict[str, str] = {}
        try:
            body = response.json()
            for log in body.get("logs") or []:
                if isinstance(log, dict) and log.get("token"):
                    failed[str(log["token"])] = str(log.get("error") or log.get("message") or "failed")
        except (ValueError, AttributeError):
            pass
        for due in batch:
            error = failed.get(due.token or "")
            if error is None:
                outcome.sent.append(due.id)
            elif is_invalid_token_error(error):
                outcome.invalid[due.id] = (due.device_id, due.token or "")
            else:
                outcome.retry[due.id] = (None, error)
        return outcome

    async def close(self) -> None:
        await self.client.aclose()


class FcmAdapter:
    """FCM HTTP v1: ``POST {url}/messages:send``, one token per message, data values strings, ≤ 4 KB.

    ``url`` is ``https://fcm.googleapis.com/v1/projects/<project-id>``; ``credentials`` an OAuth 2 access token
    (refreshed outside the service, e.g. by the deployment's credential helper)."""

    batch_size = 100

    def __init__(self, url: str, *, credentials: str, timeout: float = 10.0, concurrency: int = 20) -> None:
        self.endpoint = url.rstrip("/") + "/messages:send"
        self.client = httpx.AsyncClient(timeout=timeout, headers={"Authorization": f"Bearer {credentials}"})
        self.limit = asyncio.Semaphore(concurrency)

    @staticmethod
    def payload(due: Due) -> dict[str, Any]:
        message: dict[str, Any] = {"token": due.token, "data": _data(due)}
        if due.platform == "android":
            message["android"] = {"priority": "high"}
        else:
            message["apns"] = {"headers": {"apns-priority": "10" if due.text else "5"}}
        text = due.text or ""
        body = {"message": message}
        while True:
            if text:
                message["notification"] = {"body": text}
            if len(json.dumps(body).encode()) <= FCM_MAX_BYTES or not text:
                return body
            text = text[: max(0, len(text) - 64)].rstrip() + "…" if len(text) > 65 else ""
            if not text:
                message.pop("notification", None)

    async def _one(self, due: Due, outcome: Outcome) -> None:
        async with self.limit:
            try:
                response = await self.client.post(self.endpoint, json=self.payload(due))
            except httpx.HTTPError as exc:
                outcome.retry[due.id] = (None, f"{type(exc).__name__}: {exc}")
                return
        if response.status_code < 300:
            outcome.sent.append(due.id)
        elif response.status_code == 429 or response.status_code >= 500:
            outcome.retry[due.id] = (retry_after(response), f"HTTP {response.status_code}")
        elif (
            response.status_code == 404
            or is_invalid_token_error(response.text)
            or (response.status_code == 400 and "registration token" in response.text.lower())
        ):
            outcome.invalid[due.id] = (due.device_id, due.token or "")
        else:
            outcome.dropped[due.id] = f"HTTP {response.status_code}: {response.text[:200]}"

    async def send(self, batch: Sequence[Due]) -> Outcome:
        outcome = Outcome()
        await asyncio.gather(*(self._one(due, outcome) for due in batch))
        return outcome

    async def close(self) -> None:
        await self.client.aclose()


def push_enabled(kind: str, url: str) -> bool:
    """Whether push is on: an adapter named and its URL given."""
    return kind != "none" and bool(url)


def make_adapter(kind: str, url: str, credentials: str) -> PushAdapter | None:
    """The configured adapter; None when push is off (no URL or ``none``)."""
    if not push_enabled(kind, url):
        return None
    if kind == "gorush":
        return GorushAdapter(url, credentials=credentials)
    if kind == "fcm":
        return FcmAdapter(url, credentials=credentials)
    raise ValueError(f"unknown push adapter {kind!r} (gorush, fcm or none)")
