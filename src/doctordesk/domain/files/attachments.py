"""Attachment rules: the allowed types, the type decided from the bytes, and file names made safe.

Allowed: PDF (reports, referrals), PNG (screenshots) and JPEG (photos). The name and the declared type a client
sends are never trusted: a file is what its signature says, and then what a real parser makes of it
(``domain/files/check.py``: PDFs walked object by object, images decoded and re-encoded).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.texts import N_, Text

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
JPEG_SOI = b"\xff\xd8\xff"
SNIFF_BYTES = 8


def refuse(message: str) -> ValidationFailed:
    """The validation error for the ``file`` field."""
    return ValidationFailed(fields={FIELD: message})


def allowed_types_text() -> str:
    return ", ".join(t.label for t in ALLOWED)


def sniff(head: bytes) -> FileType:
    """The type announced by the file's first bytes (at least ``SNIFF_BYTES`` of them), or ValidationFailed."""
    if not head:
        raise refuse(N_("The file is empty."))
    if head.startswith(b"%PDF-"):
        return PDF
    if head.startswith(PNG_SIGNATURE):
        return PNG
    if head.startswith(JPEG_SOI):
        return JPEG
    raise refuse(Text("This file type is not allowed. Allowed: {types}.", types=allowed_types_text()))


# --- file names -----------------------------------------------------------------------------------------------

_UNSAFE_IN_NAME = re.compile(r'[<>:"/\\|?*]')


def check_filename(raw: str | None) -> None:
    """The free-text rule for a file's name as sent: control characters (NUL, line breaks, escapes) are refused,
    naming the ``file`` field. Format characters and overlong names are cleaned by ``safe_filename``."""
    problem = text_problem(raw or "", max_chars=None)
    if problem is not None:
        # Without a length limit the only problem is a control character.
        raise ValidationFailed(fields={"file": N_("The file name contains control characters or line breaks.")})


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
