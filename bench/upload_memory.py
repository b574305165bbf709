"""How much the server's memory grows while eight 10 MiB uploads arrive at once (not part of ``make bench``).

``python -m bench.upload_memory``: a seeded server on loopback (bench/common.Server); one small send warms it up
(imports, pools); then its peak RSS is reset (``/proc/<pid>/clear_refs``) and eight sends of a file just under the
upload limit go out together. Reported per file type: RSS before, the peak during the sends, the growth. The files:
a PDF padded to size, and a JPEG of noise (the worst case for decoding: no photo compresses less), each against
a fresh server; then the decoding bombs within the pixel limit: a 6300×6300 RGBA PNG of zeros (154 KiB that
decode to 159 MB) and a 7200×5400 JPEG (a 39-megapixel photo, reduced while it is decoded). SQLite by default;
PostgreSQL, in a database of its own, with ``DOCTORDESK_BENCH_POSTGRES_URL`` (bench/common.py).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

import httpx
from PIL import Image

from bench.common import Server, table
from doctordesk.store.seed import sample_files

CONCURRENT = 8
FILE_BYTES = 10 * 1024 * 1024 - 64 * 1024


def _status(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) // 1024  # MiB
    return values


def _noise_jpeg(target: int) -> bytes:
    side = 512
    while True:
        out = io.BytesIO()
        Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "JPEG", quality=95)
        if target * 0.9 <= out.tell() <= target:
            return out.getvalue()
        side = int(side * (target / out.tell()) ** 0.5) - 8


async def _round(server: Server, headers: dict[str, str], appointments: list[int], name: str, data: bytes) -> list:
    assert server.process is not None
    pid = server.process.pid
    async with httpx.AsyncClient(base_url=server.url, timeout=300) as client:

        async def one(i: int, payload: bytes) -> int:
            response = await client.post(
                "/profile/messages/send-message",
                data={"content": f"upload {i}", "appointment-id": str(appointments[i % len(appointments)])},
                files={"file": (name, payload, "application/octet-stream")},
                headers=headers,
            )
            return response.status_code

        await one(0, sample_files.pdf() if name.endswith(".pdf") else sample_files.png())
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
        before = _status(pid)["VmRSS"]
        codes = await asyncio.gather(*(one(i, data) for i in range(CONCURRENT)))
        peak = _status(pid)["VmHWM"]
    return [name, len(data) // 1024, before, peak, peak - before, " ".join(str(c) for c in sorted(set(codes)))]


def _zeros_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (6300, 6300)).save(out, "PNG")
    return out.getvalue()


def _large_jpeg() -> bytes:
    out = io.BytesIO()
    Image.linear_gradient("L").resize((7200, 5400)).convert("RGB").save(out, "JPEG", quality=90)
    return out.getvalue()


def main() -> int:
    rows = []
    files = (
        ("report.pdf", sample_files.pdf(padding=FILE_BYTES)),
        ("photo.jpg", _noise_jpeg(FILE_BYTES)),
        ("zeros.png", _zeros_png()),
        ("large.jpg", _large_jpeg()),
    )
    for name, data in files:
        # A fresh server per file type: memory a process once took is rarely given back and would hide the growth.
        with Server(postgres=True) as server:
            headers = server.login("doctor1")
            listing = httpx.get(f"{server.url}/api/appointments", params={"limit": 50}, headers=headers).json()
            appointments = [a["id"] for a in listing["appointments"]]
            rows.append(asyncio.run(_round(server, headers, appointments, name, data)))
    print(f"{CONCURRENT} concurrent uploads, server RSS in MiB")
    print(table(["file", "KiB each", "RSS before", "peak RSS", "growth", "status"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
