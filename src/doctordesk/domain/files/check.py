"""Checking a received file: its type from its first bytes, then the parser for that type decides.

PDFs are read object by object and refused when anything in them can act (``pdf_check``); their bytes are kept as
sent. Images are decoded and re-encoded (``image_check``) into the stream the caller provides; the new encoding is
what is kept. The work is CPU-bound: callers run it in a thread (``services/chat/file_checking.py``). Files are read
from and written to streams, so the caller decides where the bytes live (a temporary file for uploads).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import IO

from doctordesk.domain.files.attachments import PDF, SNIFF_BYTES, FileType, sniff
from doctordesk.domain.files.images import reencode_image
from doctordesk.domain.files.pdfs import check_pdf


@dataclass(frozen=True, slots=True)
class CheckedFile:
    """A file that passed its checks: its type and the stream holding the bytes to store."""

    kind: FileType
    file: IO[bytes]

    def read(self) -> bytes:
        """The bytes to store."""
        self.file.seek(0, os.SEEK_SET)
        return self.file.read()


def check(stream: IO[bytes], *, reencoded: IO[bytes]) -> CheckedFile:
    """Check the file in ``stream`` (seekable, read from the start); an image's new encoding is written to
    ``reencoded`` (empty). ValidationFailed names the ``file`` field."""
    stream.seek(0)
    kind = sniff(stream.read(SNIFF_BYTES))
    if kind is PDF:
        check_pdf(stream)
        return CheckedFile(kind, stream)
    reencode_image(stream, kind, out=reencoded)
    return CheckedFile(kind, reencoded)


def check_bytes(data: bytes) -> CheckedFile:
    """``check`` for a file already in memory (the demo data, tests)."""
    return check(io.BytesIO(data), reencoded=io.BytesIO())
