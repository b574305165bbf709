"""HEAD answered for every GET route (RFC 9110 §9.3.2): the GET's status and headers, without the body.

FastAPI's path operations declared with ``GET`` answer nothing else, while the ``Allow`` header rightly names
``HEAD`` beside every ``GET`` (``web/errors.allowed_methods``). Rather than a HEAD operation beside each GET (and
beside the web app's files and the event stream, which are served outside the routers), this layer in front of the
whole app passes a HEAD request on as a GET and drops what the GET would have sent after its headers: the same
route, the same checks (a HEAD without credentials is 401 where the GET is), the same ``Content-Length``.

A response that streams (the event stream) ends with its headers: the app is told the client went away at once,
so it stops as after any disconnect, and whatever it still sends goes nowhere.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_DISCONNECT: Message = {"type": "http.disconnect"}
_END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


class HeadAsGet:
    """Pure ASGI layer: HEAD served as GET, body left out."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = asyncio.Event()

        async def head_send(message: Message) -> None:
            if ended.is_set():
                return
            if message["type"] == "http.response.start":
                await send(message)
            elif message["type"] in ("http.response.body", "http.response.pathsend", "http.response.zerocopysend"):
                ended.set()
                await send(_END)
            else:
                await send(message)

        async def head_receive() -> Message:
            if ended.is_set():
                return _DISCONNECT
            received = asyncio.ensure_future(receive())
            waiting = asyncio.ensure_future(ended.wait())
            try:
                await asyncio.wait((received, waiting), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
            if received.done():
                return received.result()
            received.cancel()
            return _DISCONNECT

        await self.app({**scope, "method": "GET"}, head_receive, head_send)
