"""A push partner on loopback speaking the Gorush contract (``POST /api/push``), for end-to-end push tests.

It can answer the next requests with an error (``fail_next``), go down and come back on the same port, and
report tokens as unregistered. ``accepted`` lists the notification ids of every notification it accepted.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.live import free_port


class PushStub:
    def __init__(self) -> None:
        self.port = free_port()
        self.lock = threading.Lock()
        self.accepted: list[str] = []
        self.invalid_tokens: set[str] = set()
        self.failures: list[tuple[int, str | None]] = []
        self.requests = 0
        self.malformed: list[str] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, count: int, status: int = 503, retry_after: str | None = None) -> None:
        with self.lock:
            self.failures.extend([(status, retry_after)] * count)

    def counts(self) -> Counter[str]:
        with self.lock:
            return Counter(self.accepted)

    def up(self) -> None:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, payload, headers = stub.answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, path: str, body: bytes) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self.lock:
            self.requests += 1
            if self.failures:
                status, retry_after = self.failures.pop(0)
                return status, {"error": "try later"}, ({"Retry-After": retry_after} if retry_after else {})
        if path != "/api/push":
            return 404, {"error": "not found"}, {}
        try:
            notifications = json.loads(body)["notifications"]
            for n in notifications:
                assert isinstance(n["tokens"], list) and n["tokens"]
                assert n["platform"] in (1, 2)
                assert isinstance(n["message"], str)
                assert all(isinstance(v, str) for v in n["data"].values())
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            with self.lock:
                self.malformed.append(repr(exc))
            return 400, {"error": "malformed"}, {}
        logs = []
        with self.lock:
            for n in notifications:
                bad = [t for t in n["tokens"] if t in self.invalid_tokens]
                for token in bad:
                    platform = "ios" if n["platform"] == 1 else "android"
                    logs.append({"type": "failed-push", "platform": platform, "token": token, "error": "Unregistered"})
                if not bad:
                    self.accepted.append(n["data"]["notification_id"])
        return 200, {"counts": len(notifications), "logs": logs, "success": "ok"}, {}
