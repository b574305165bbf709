"""A webhook receiver on loopback for the tests: records every POST and PUT (method, path, headers, body), answers
204, or the queued answers of ``fail_next`` first (a status and optional Retry-After), or always ``status_for`` a
path (with a ``Location`` from ``location_for``, for redirects). It can answer after a delay (``delay``), counts
the requests in flight (``peak``: the most at once, per path and overall), and can go down and come back on the
same port. (FHIR Subscriptions PUT their payload, as R4's rest-hook does.)"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook

from tests.support.live import free_port


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    method: str = "POST"

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]

    def json(self) -> Any:
        return json.loads(self.body)

    def verified(self, secret: str) -> Any:
        """The payload, after the Standard Webhooks library checked the signature with ``secret``."""
        return Webhook(secret).verify(self.body, self.headers)


class WebhookReceiver:
    def __init__(self) -> None:
        self.port = free_port()
        self.lock = threading.Lock()
        self.received: list[Received] = []
        self.answers: list[tuple[int, str | None]] = []
        self.status_for: dict[str, int] = {}
        self.location_for: dict[str, str] = {}
        self.scheme = "http"
        self.delay = 0.0
        self.in_flight: Counter[str] = Counter()
        self.peaks: Counter[str] = Counter()  # the most requests in flight at once, per path ("" overall)
        self._server: ThreadingHTTPServer | None = None

    def url(self, path: str = "/hook") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def fail_next(self, count: int, status: int = 503, retry_after: str | None = None) -> None:
        with self.lock:
            self.answers.extend([(status, retry_after)] * count)

    def requests(self, path: str | None = None) -> list[Received]:
        with self.lock:
            return [r for r in self.received if path is None or r.path == path]

    def peak(self, path: str = "") -> int:
        """The most requests in flight at once, to ``path`` or (without) overall."""
        with self.lock:
            return self.peaks[path]

    def _arrived(self, path: str) -> None:
        with self.lock:
            for key in (path, ""):
                self.in_flight[key] += 1
                self.peaks[key] = max(self.peaks[key], self.in_flight[key])

    def _answered(self, path: str) -> None:
        with self.lock:
            for key in (path, ""):
                self.in_flight[key] -= 1

    def up(self, *, tls: ssl.SSLContext | None = None) -> WebhookReceiver:
        """Serve on the port (HTTPS with ``tls``, a server context holding the certificate)."""
        receiver = self
        self.scheme = "https" if tls else "http"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                receiver._arrived(self.path)
                self.counted = True
                try:
                    self._answer()
                finally:
                    self._done()

            def _done(self) -> None:
                # Counted out before the answer is written: the client can send its next request only once it has
                # the answer, so a busy machine that runs this thread late cannot make two requests look
                # concurrent.
                if self.counted:
                    self.counted = False
                    receiver._answered(self.path)

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    receiver.received.append(Received(self.path, headers, body, self.command))
                    status, retry_after = receiver.answers.pop(0) if receiver.answers else (204, None)
                    status = receiver.status_for.get(self.path, status)
                    delay = receiver.delay
                    location = receiver.location_for.get(self.path)
                if delay:
                    time.sleep(delay)
                self._done()
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                if location is not None:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_POST  # noqa: N815 (the http.server API)

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
