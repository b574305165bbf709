"""Attachment rules: the type is decided from the bytes against an allow-list, and file names are made safe.

Allowed: PDF (reports, referrals), PNG (screenshots) and JPEG (photos). The name and the declared type a client
sends are never trusted: a file is what its magic numbers and structure say. Files that are valid as one type
but carry a second format (polyglots: a PDF header early in an image, HTML or script, a ZIP directory) are
refused where that can be detected, and so are PDFs with embedded JavaScript or launch actions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import text_problem

FIELD = "file"
MAX_FILENAME_CHARS = 120


@dataclass(frozen=True, slots=True)
class FileType:
    mime: str
    extension: str
    label: str


PDF = FileType("application/pdf", ".pdf", "PDF")
PNG = FileType("image/png", ".png", "PNG")
JPEG = FileType("image/jpeg", ".jpg", "JPEG")
ALLOWED = (PDF, PNG, JPEG)
_EXTENSIONS = {PDF: (".pdf",), PNG: (".png",), JPEG: (".jpg", ".jpeg", ".jpe")}

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"
JPEG_SOI = b"\xff\xd8\xff"
JPEG_EOI = b"\xff\xd9"

# Markers of a second format hidden in a file. Browsers sniff HTML/script, PDF readers accept a header anywhere in
# the first kilobyte, ZIP readers (and JAR, DOCX) read the central directory from the end of any file.
_HTML_MARKERS = (b"<script", b"<html", b"<svg", b"<iframe", b"<?php", b"<body", b"javascript:")
_ZIP_DIRECTORY = b"PK\x05\x06"
_PDF_ACTIVE = re.compile(rb"/(JavaScript|JS|Launch|EmbeddedFile|RichMedia|XFA)\b")


def _refuse(message: str) -> ValidationFailed:
    return ValidationFailed(fields={FIELD: message})


def allowed_types_text() -> str:
    return ", ".join(t.label for t in ALLOWED)


def detect(data: bytes) -> FileType:
    """The file's type from its bytes, or ValidationFailed (empty, not allowed, or a polyglot)."""
    if not data:
        raise _refuse("The file is empty.")
    kind = _magic(data)
    if kind is None:
        raise _refuse(f"This file type is not allowed. Allowed: {allowed_types_text()}.")
    _check_structure(kind, data)
    _check_polyglot(kind, data)
    return kind


def _magic(data: bytes) -> FileType | None:
    if data.startswith(b"%PDF-"):
        return PDF
    if data.startswith(PNG_SIGNATURE):
        return PNG
    if data.startswith(JPEG_SOI):
        return JPEG
    return None


def _check_structure(kind: FileType, data: bytes) -> None:
    """The minimal structure of the type, so a file is not just a signature glued onto something else."""
    if kind is PDF:
        if b"%%EOF" not in data[-1024:]:
            raise _refuse("The PDF is incomplete or damaged.")
    elif kind is PNG:
        if data[12:16] != b"IHDR" or not data.endswith(PNG_IEND):
            raise _refuse("The PNG is incomplete, damaged or has data after its end.")
    elif kind is JPEG and not data.rstrip(b"\x00\r\n ").endswith(JPEG_EOI):
        raise _refuse("The JPEG is incomplete, damaged or has data after its end.")


def _check_polyglot(kind: FileType, data: bytes) -> None:
    lowered_head = data[:4096].lower()
    if any(marker in lowered_head for marker in _HTML_MARKERS):
        raise _refuse("The file also contains web content and is refused.")
    if _ZIP_DIRECTORY in data:
        raise _refuse("The file also contains an archive and is refused.")
    if kind is not PDF and b"%PDF-" in data[:1024]:
        raise _refuse("The image also contains a PDF and is refused.")
    if kind is PDF and _PDF_ACTIVE.search(data):
        raise _refuse("PDFs with scripts, launch actions or embedded files are refused.")


# --- file names -----------------------------------------------------------------------------------------------

_UNSAFE_IN_NAME = re.compile(r'[<>:"/\\|?*]')


def check_filename(raw: str | None) -> None:
    """The free-text rule for a file's name as sent: control characters (NUL, line breaks, escapes) are refused,
    naming the ``file`` field. Format characters and overlong names are cleaned by ``safe_filename``."""
    problem = text_problem(raw or "", max_chars=None)
    if problem is not None:
        raise ValidationFailed(fields={"file": f"The file name {problem[0].lower()}{problem[1:]}"})


def safe_filename(raw: str | None, kind: FileType) -> str:
    """A file name safe to store and to send back: path components, control and format characters (e.g. the
    right-to-left override) removed, unicode kept (NFC), length bounded, and the extension matching the detected
    type (``report.exe`` holding a PDF becomes ``report.exe.pdf``; ``scan.png`` holding a JPEG ``scan.jpg``)."""
    name = unicodedata.normalize("NFC", raw or "")
    name = re.split(r"[/\\]", name)[-1]  # the last path component only: no traversal
    name = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))
    name = _UNSAFE_IN_NAME.sub("_", name)
    name = " ".join(name.split())  # no newlines or runs of spaces
    name = name.strip(" .")  # no hidden files, no "..", no trailing dots (Windows)
    stem, dot, ext = name.rpartition(".")
    if dot and ("." + ext.lower()) in _EXTENSIONS[kind]:
        stem = stem.strip(" .")
        ext = "." + ext.lower()
    elif dot and ("." + ext.lower()) in {e for exts in _EXTENSIONS.values() for e in exts}:
        # A known extension of another allowed type: replace it (the declared type lied).
        stem, ext = stem.strip(" ."), kind.extension
    else:
        stem, ext = name, kind.extension
    stem = stem[: MAX_FILENAME_CHARS - len(ext)].rstrip(" .")
    return (stem or "attachment") + ext


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII fallback name and the exact UTF-8 name in RFC 5987 ``filename*``."""
    fallback = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode("ascii")
    fallback = re.sub(r"[^A-Za-z0-9._ ()-]", "_", fallback).strip() or "attachment"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
