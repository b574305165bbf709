"""Tiny valid files made in code, for the demo data, the tests and the benchmarks (no binary fixtures)."""

from __future__ import annotations

import struct
import zlib


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (30, 120, 200)) -> bytes:
    """A valid RGB PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    raw = row * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(raw))
        + _png_chunk(b"IEND", b"")
    )


def pdf(text: str = "Lab report", *, padding: int = 0) -> bytes:
    """A valid one-page PDF showing ``text``; ``padding`` adds that many bytes in a comment (for size tests)."""
    safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 18 Tf 40 100 Td ({safe}) Tj ET".encode("latin-1", "replace")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return classic_pdf(objects, padding=padding)


def classic_pdf(objects: list[bytes], *, padding: int = 0) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the first the catalog) with a classic cross-reference table;
    ``padding`` adds that many bytes in a comment."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    if padding:
        out += b"%" + b"x" * max(0, padding - 2) + b"\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def jpeg() -> bytes:
    """A minimal baseline JPEG (1x1, grey): start of image, tables, one scan, end of image."""
    quant = b"\xff\xdb\x00\x43\x00" + bytes([1] * 64)
    frame = b"\xff\xc0\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00"
    huff_dc = b"\xff\xc4\x00\x14\x00" + bytes([1] + [0] * 15) + b"\x00"
    huff_ac = b"\xff\xc4\x00\x14\x10" + bytes([1] + [0] * 15) + b"\x00"
    scan = b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x00"
    return (
        b"\xff\xd8"
        + b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
        + quant
        + frame
        + huff_dc
        + huff_ac
        + scan
        + b"\xff\xd9"
    )
