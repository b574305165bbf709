"""A body size limit enforced while the body streams in, so an oversized request is never held whole."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from doctordesk.domain.errors import PayloadTooLarge
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.screens.protocol import error_body


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _reject(send, fhir_api=str(scope.get("path", "")).startswith("/fhir/"))
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise PayloadTooLarge()
            return message

        await self.app(scope, limited, send)


async def _reject(send: Send, *, fhir_api: bool = False) -> None:
    """413 in the service's error shape, or under /fhir as an OperationOutcome (docs/fhir.md#errors)."""
    import json

    if fhir_api:
        outcome = fhir_mapping.error_outcome(PayloadTooLarge.code, PayloadTooLarge.default_message)
        body, kind = json.dumps(outcome).encode(), fhir_mapping.MEDIA_TYPE.encode()
    else:
        body = json.dumps(error_body(PayloadTooLarge.code, PayloadTooLarge.default_message, 413)).encode()
        kind = b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
