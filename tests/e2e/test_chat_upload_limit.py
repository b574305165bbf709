"""On a real server: an oversized upload is answered 413 while the client is still sending it."""

from __future__ import annotations

import socket
import time

import httpx

CHUNK = 256 * 1024
TOTAL = 64 * 1024 * 1024  # what the client would send; the limit is 10 MiB


def test_oversized_upload_is_answered_413_before_the_body_is_sent(live_server):
    with httpx.Client(base_url=live_server.url) as http:
        token = http.post("/auth/login", data={"username": "doctor1", "password": "demo"}).json()["access_token"]
    boundary = "e2eboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="appointment-id"\r\n\r\n1\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.4\n"
    ).encode()
    request = (
        "POST /profile/messages/send-message HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{live_server.port}\r\n"
        f"Authorization: Bearer {token}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()

    def chunked(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=10) as s:
        s.sendall(request + chunked(head))
        s.setblocking(False)
        deadline = time.monotonic() + 60
        payload = chunked(b"x" * CHUNK)
        pending = memoryview(payload)
        while sent < TOTAL and time.monotonic() < deadline:
            try:
                answer += s.recv(65536)
            except BlockingIOError:
                pass
            if answer:
                break
            try:
                written = s.send(pending)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += written
            pending = pending[written:]
            if not pending:
                pending = memoryview(payload)  # whole chunks only: the framing stays valid
        s.setblocking(True)
        s.settimeout(10)
        while b"\r\n\r\n" not in answer:
            more = s.recv(65536)
            if not more:
                break
            answer += more
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < TOTAL // 2, f"sent {sent} bytes before the answer"
    with httpx.Client(base_url=live_server.url) as http:
        page = http.put(
            "/profile/messages/user-chat?appointment-id=1", headers={"Authorization": f"Bearer {token}"}
        ).json()
        assert not any("huge" in str(e) for e in page["elements"])
