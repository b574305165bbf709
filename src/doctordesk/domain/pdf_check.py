"""PDF checking with a real parser (pypdf): every object of the document is read — from the cross-reference table
and from compressed object streams alike — and a document that can act on its own is refused.

Names are compared after the parser has decoded them, so ``/J#61vaScript`` is ``/JavaScript``. Refused anywhere in
the document, as a dictionary key or a name value: scripts (``/JavaScript``, ``/JS``), launching programs
(``/Launch``), files inside the PDF (``/EmbeddedFile``, ``/EmbeddedFiles``), links and network actions (``/URI``,
``/SubmitForm``, ``/ImportData``, ``/GoToR``, ``/GoToE``), rich media and XML forms (``/RichMedia``, ``/XFA``), and
any additional-actions dictionary (``/AA``: actions fired on opening, closing, viewing). An ``/OpenAction`` may
only be a destination (a page to show) or a plain ``/GoTo``.

Beside the parser: no data after the last ``%%EOF`` (nothing appended) and no ZIP directory where ZIP readers look
for one (the last 64 KiB). A document the parser cannot read, or one protected by a password, is refused: it
cannot be checked.
"""

from __future__ import annotations

import os
from typing import IO, Any

from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject

from doctordesk.domain.errors import DomainError
from doctordesk.domain.files import refuse
from doctordesk.domain.texts import N_

ACTIVE_NAMES = frozenset(
    {
        "/JavaScript",
        "/JS",
        "/Launch",
        "/EmbeddedFile",
        "/EmbeddedFiles",
        "/URI",
        "/SubmitForm",
        "/ImportData",
        "/GoToR",
        "/GoToE",
        "/RichMedia",
        "/XFA",
        "/AA",
    }
)
# A ZIP reader looks for its end-of-central-directory record in the last 22 bytes plus at most a 64 KiB comment.
ZIP_TAIL_BYTES = 22 + 65535
ZIP_DIRECTORY_END = b"PK\x05\x06"
HEAD_BYTES = 1024
# Markup that makes a browser sniff the file as a page (it reads the first bytes only).
_WEB_MARKERS = (b"<script", b"<html", b"<svg", b"<iframe", b"<?php", b"<body")

ACTIVE_MESSAGE = N_("PDFs with scripts, links, launch actions or embedded files are refused.")
UNREADABLE_MESSAGE = N_("The PDF could not be read: it is damaged or not a PDF.")


def check_pdf(stream: IO[bytes]) -> None:
    """Raise ValidationFailed unless ``stream`` holds a readable PDF with nothing active in it."""
    _check_edges(stream)
    stream.seek(0)
    try:
        reader = PdfReader(stream, strict=False)
        if reader.is_encrypted and not _open_without_password(reader):
            raise refuse(N_("Password-protected PDFs cannot be checked and are refused."))
        if len(reader.pages) < 1:
            raise refuse(UNREADABLE_MESSAGE)
        found = _active_name(reader)
    except DomainError:
        raise
    except Exception:
        # A parser of untrusted bytes may fail in many ways (damaged streams, loops, recursion): all mean the
        # document cannot be checked.
        raise refuse(UNREADABLE_MESSAGE) from None
    if found:
        raise refuse(ACTIVE_MESSAGE)


def _check_edges(stream: IO[bytes]) -> None:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    head = stream.read(HEAD_BYTES).lower()
    if any(marker in head for marker in _WEB_MARKERS):
        raise refuse(N_("The file also contains web content and is refused."))
    stream.seek(max(0, size - ZIP_TAIL_BYTES))
    tail = stream.read()
    end = tail.rfind(b"%%EOF")
    if end < 0:
        raise refuse(N_("The PDF is incomplete, damaged or has data after its end."))
    if tail[end + 5 :].strip(b"\r\n\t\x0c \x00"):
        raise refuse(N_("The PDF has data after its end and is refused."))
    if ZIP_DIRECTORY_END in tail:
        raise refuse(N_("The file also contains an archive and is refused."))


def _open_without_password(reader: PdfReader) -> bool:
    """Documents restricted by an owner password only open with the empty user password."""
    try:
        return bool(reader.decrypt(""))
    except Exception:
        return False


def _active_name(reader: PdfReader) -> bool:
    """Whether any object of the document names an active feature (objects in object streams included)."""
    if _walk(reader.trailer):
        return True
    numbers: set[tuple[int, int]] = set()
    for generation, table in reader.xref.items():
        numbers.update((number, generation) for number in table)
    numbers.update((number, 0) for number in reader.xref_objStm)
    for number, generation in sorted(numbers):
        if number == 0:
            continue
        value = reader.get_object(IndirectObject(number, generation, reader))
        if _walk(value):
            return True
    return _open_action_is_active(reader.root_object.get("/OpenAction"))


def _walk(value: Any) -> bool:
    """Whether this object, or any direct object inside it, uses an active name. Indirect references are not
    followed: every indirect object is walked on its own."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, NameObject):
            if item in ACTIVE_NAMES:
                return True
        elif isinstance(item, DictionaryObject):
            for key, inner in item.items():
                if key in ACTIVE_NAMES:
                    return True
                if not isinstance(inner, IndirectObject):
                    stack.append(inner)
        elif isinstance(item, ArrayObject):
            stack.extend(inner for inner in item if not isinstance(inner, IndirectObject))
    return False


def _open_action_is_active(action: Any) -> bool:
    """An open action may show a page (a destination array or ``/S /GoTo``); anything else acts on opening."""
    if action is None:
        return False
    action = action.get_object()
    if isinstance(action, ArrayObject):
        return False
    if isinstance(action, DictionaryObject):
        return action.get("/S") != "/GoTo" or "/Next" in action
    return True
