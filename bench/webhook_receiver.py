"""The webhook receiver of ``bench_webhooks``, run as its own process under uvicorn:
``python -m bench.webhook_receiver PORT LOG SECRET FAIL_RATE``.

Every POST is verified with the Standard Webhooks library. A random ``FAIL_RATE`` share of calls is answered 503
without being processed; the others are recorded (one ``webhook-id seq`` line appended to LOG before the 204
goes out, so a line survives the process being killed) and answered 204. A bad signature is recorded as
``webhook-id BAD``.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def make_app(log_path: str, secret: str, fail_rate: float) -> Any:
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    verifier = Webhook(secret)
    chance = random.Random()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if chance.random() < fail_rate:
            status = 503
        else:
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            try:
                payload = verifier.verify(body, headers)
                seq = str(payload["data"]["version"])
            except (WebhookVerificationError, ValueError, KeyError):
                seq = "BAD"
            os.write(log, f"{headers.get('webhook-id')} {seq}\n".encode())
            status = 204
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    return app


def main() -> None:
    import uvicorn

    port, log_path, secret, fail_rate = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    uvicorn.run(
        make_app(log_path, secret, fail_rate),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http="httptools",
        lifespan="off",
    )


if __name__ == "__main__":
    main()
