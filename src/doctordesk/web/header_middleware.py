"""Pure ASGI middleware that changes only the headers of a response (its body, a stream such as SSE too, passes
through untouched)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

Headers = list[tuple[bytes, bytes]]


class HeaderMiddleware:
    """``begin`` sees each HTTP request first; ``headers`` gives the response's headers when it starts."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.begin(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self.headers(scope, list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def begin(self, scope: Scope) -> None:
        """Before the request is handled (nothing by default)."""

    def headers(self, scope: Scope, headers: Headers) -> Headers:  # noqa: ARG002 (the scope is for others)
        return headers
