"""The Standard Webhooks headers of one delivery: its id, timestamp and one signature per valid secret."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from standardwebhooks.webhooks import Webhook

from doctordesk.services.webhooks.outbox import Due


@lru_cache(maxsize=1024)
def _signer(secret: str) -> Webhook:
    return Webhook(secret)


def signed_headers(due: Due, *, at: datetime) -> dict[str, str]:
    """The delivery's own headers (a subscription's), then the Standard Webhooks headers: id, Unix timestamp,
    and one ``v1,`` signature per valid secret; and the body's type (none for an empty notification)."""
    signatures = " ".join(_signer(secret).sign(due.message_id, at, due.payload) for secret in due.secrets)
    headers = dict(due.headers)
    headers.update(
        {
            "webhook-id": due.message_id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signatures,
        }
    )
    if due.content_type is not None:
        headers["content-type"] = due.content_type
    return headers
