"""The request's language: from ``Accept-Language`` here, replaced by the user's stored choice once the caller is
authenticated (``web/deps.py``). Every response says which it used (``Content-Language``)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from doctordesk import i18n


class Language:
    """Pure ASGI middleware: the locale is a context variable, so it holds for the whole request's task."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accept = None
        for name, value in scope.get("headers", ()):
            if name == b"accept-language":
                accept = value.decode("latin-1")
                break
        i18n.use(i18n.negotiate(accept))

        async def send_with_language(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"content-language", i18n.current().encode()))
                headers.append((b"vary", b"Accept-Language"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_language)
