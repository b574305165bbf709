"""PDFs assembled object by object for the upload tests: classic cross-reference tables, or (PDF 1.5) every object
inside a compressed object stream indexed by a compressed cross-reference stream, which is how most PDF writers
save today and where byte scanning sees nothing but deflated data."""

from __future__ import annotations

import struct
import zlib

from doctordesk.store.seed.sample_files import classic_pdf

CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"


def pdf(extra: list[bytes] | None = None, *, catalog: bytes = CATALOG, page: bytes = PAGE, compressed: bool) -> bytes:
    """A one-page PDF: objects 1 catalog, 2 pages, 3 page, then ``extra`` as objects 4, 5, ..."""
    objects = [catalog, PAGES, page, *(extra or [])]
    return _object_stream_pdf(objects) if compressed else classic_pdf(objects)


def _object_stream_pdf(objects: list[bytes]) -> bytes:
    count = len(objects)
    stream_number, xref_number = count + 1, count + 2
    header = bytearray()
    body = bytearray()
    for number, obj in enumerate(objects, start=1):
        header += f"{number} {len(body)} ".encode()
        body += obj + b"\n"
    packed = zlib.compress(bytes(header) + bytes(body))
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    stream_offset = len(out)
    out += (
        f"{stream_number} 0 obj\n<< /Type /ObjStm /N {count} /First {len(header)} /Filter /FlateDecode "
        f"/Length {len(packed)} >>\nstream\n".encode()
        + packed
        + b"\nendstream\nendobj\n"
    )
    xref_offset = len(out)
    rows = [struct.pack(">BIH", 0, 0, 65535)]
    rows += [struct.pack(">BIH", 2, stream_number, index) for index in range(count)]
    rows += [struct.pack(">BIH", 1, stream_offset, 0), struct.pack(">BIH", 1, xref_offset, 0)]
    table = zlib.compress(b"".join(rows))
    out += (
        f"{xref_number} 0 obj\n<< /Type /XRef /Size {xref_number + 1} /W [1 4 2] /Root 1 0 R "
        f"/Filter /FlateDecode /Length {len(table)} >>\nstream\n".encode()
        + table
        + b"\nendstream\nendobj\n"
    )
    out += f"startxref\n{xref_offset}\n%%EOF\n".encode()
    return bytes(out)
