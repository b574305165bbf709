"""Random send bodies never reach a 500: every rejection is the error shape, and a rejection stores nothing."""

from __future__ import annotations

import random

from doctordesk.store.seed import sample_files
from tests.support.chat import SEND, stored

ALPHABET = "aZ09 \t\r\n\x00\x01\x1b\x7f<>&\"'%/\\é日😀\u202e\ufeff"
MAGICS = [b"", b"%PDF-", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"PK\x03\x04", b"<svg", b"GIF8"]


SAFE = "aZ09 \n<>&\"'%/é日😀"


def _text(rng: random.Random, n: int) -> str:
    alphabet = ALPHABET if rng.random() < 0.4 else SAFE
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


async def test_random_sends_never_fail_with_a_server_error(client, login, demo, runtime):
    rng = random.Random(20261121)
    runtime.settings.chat_send_per_minute = 0
    doctor = await login("doctor1")
    ids = [str(demo.appointments[0]), str(demo.appointments[7]), str(demo.appointments[14]), "", "x", "0", "9" * 30]
    accepted = 0
    for _ in range(60):
        data = {"content": _text(rng, 40), "appointment-id": rng.choice(ids)}
        files = None
        if rng.random() < 0.5:
            body = rng.choice(MAGICS) + rng.randbytes(rng.randint(0, 300))
            if rng.random() < 0.3:
                body = rng.choice([sample_files.pdf(), sample_files.png(), sample_files.jpeg()])
            files = {"file": (_text(rng, 30), body, rng.choice(["application/pdf", "image/png", "text/html", ""]))}
        headers = {**doctor.headers}
        if rng.random() < 0.3:
            headers["X-Client-Message-Id"] = rng.choice(["ok-1", "ok-2", "bad id", "x" * 70])
        before = await stored(runtime)
        response = await client.post(SEND, data=data, files=files, headers=headers)
        assert response.status_code in (200, 403, 404, 413, 422), response.text
        if response.status_code == 200:
            accepted += 1
            assert response.json()["kind"] == "update"
        else:
            assert response.json()["kind"] == "error"
            assert await stored(runtime) == before
    assert accepted > 0
